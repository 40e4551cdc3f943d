"""Load the Kokoro ONNX export with its predicted durations as a second output (for word timestamps).

The shipped export outputs audio only. Its duration predictor's rounded frames per token are the tensor
``/encoder/Clip_output_0`` (one per input token, padding included; one frame is 600 samples at 24 kHz).
:func:`model_with_durations` writes a copy of the graph that also outputs that tensor, once, into the
user cache folder under a name keyed by the source model's sha256, and returns its path. When the tensor
is not in the graph or the copy cannot be written, it returns the original model: audio still works,
only timestamps are missing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Final

__all__ = ["DURATION_TENSOR", "FRAME_SAMPLES", "cache_dir", "model_with_durations", "save_model", "sha256_of"]

logger = logging.getLogger(__name__)

#: The export's rounded, clipped per-token durations (float32 frames, shape ``(tokens,)``).
DURATION_TENSOR: Final = "/encoder/Clip_output_0"

#: Audio samples per duration frame (Kokoro's decoder: hop 300, upsampled twice).
FRAME_SAMPLES: Final = 600


def cache_dir() -> Path:
    """Where derived model files go: ``$KOKORO_ENDPOINT_CACHE`` or ``$XDG_CACHE_HOME/kokoro_endpoint``."""
    explicit = os.environ.get("KOKORO_ENDPOINT_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kokoro_endpoint"


def sha256_of(path: Path) -> str:
    """The file's sha256 (hex); derived model files are keyed by their source's."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_with_durations(model_file: Path, cache: Path | None = None) -> Path:
    """The model file to load: a cached copy that also outputs durations, else ``model_file`` itself.

    Args:
        model_file: The Kokoro ONNX export.
        cache: Folder for the derived file; :func:`cache_dir` by default.

    Returns:
        The derived model's path (written on first use), or ``model_file`` when it cannot be derived.
    """
    folder = cache or cache_dir()
    try:
        derived = folder / f"{model_file.stem}.durations.{sha256_of(model_file)[:16]}.onnx"
        if derived.is_file():
            return derived
        return _derive(model_file, derived)
    except Exception:  # timestamps are a nicety: the original model still speaks
        logger.warning("model=<%s> | could not add the duration output; no word timestamps", model_file.name)
        return model_file


def save_model(model: Any, path: Path) -> None:
    """Write an ``onnx.ModelProto`` to ``path`` under a temporary name, then rename it: a concurrent loader
    never sees half a file."""
    import onnx

    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
        temporary = Path(handle.name)
    try:
        onnx.save(model, str(temporary))
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def _derive(model_file: Path, derived: Path) -> Path:
    try:
        import onnx
    except ImportError:
        logger.warning("the onnx package is missing (pip install onnx); no word timestamps")
        return model_file
    model = onnx.load(str(model_file))
    produced = {name for node in model.graph.node for name in node.output}
    if DURATION_TENSOR not in produced:
        logger.warning("model=<%s> | no %s tensor; no word timestamps", model_file.name, DURATION_TENSOR)
        return model_file
    if all(output.name != DURATION_TENSOR for output in model.graph.output):
        model.graph.output.append(
            onnx.helper.make_tensor_value_info(DURATION_TENSOR, onnx.TensorProto.FLOAT, None)
        )
    save_model(model, derived)
    logger.info("model=<%s> | derived a copy with the duration output", derived.name)
    return derived
