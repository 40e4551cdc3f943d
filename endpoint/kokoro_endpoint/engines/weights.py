"""Where the PyTorch weights of Kokoro-82M live: a local model directory, or the hub at a pinned revision."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "CHECKPOINT_NAME",
    "DEFAULT_MODEL_DIR",
    "HUB_REPO_ID",
    "HUB_REVISION",
    "KokoroWeights",
    "local_weights",
    "resolve_model_dir",
]

HUB_REPO_ID: Final = "hexgrad/Kokoro-82M"
#: Pinned so a rebuild never silently picks up a different checkpoint; bump deliberately.
HUB_REVISION: Final = "f3ff3571791e39611d31c381e3a41a3af07b4987"
CHECKPOINT_NAME: Final = "kokoro-v1_0.pth"
DEFAULT_MODEL_DIR: Final = Path("/opt/ml/model")


@dataclass(frozen=True)
class KokoroWeights:
    """Paths of one Kokoro-82M checkpoint.

    Attributes:
        config: ``config.json``.
        checkpoint: ``kokoro-v1_0.pth``.
        voices: Voice name → ``voices/<name>.pt``.
    """

    config: Path
    checkpoint: Path
    voices: dict[str, Path]


def resolve_model_dir(model_dir: str | Path | None = None) -> Path:
    """``model_dir`` if given, else ``$SM_MODEL_DIR``, else ``/opt/ml/model`` (SageMaker's mount)."""
    if model_dir is not None:
        return Path(model_dir)
    env = os.environ.get("SM_MODEL_DIR")
    return Path(env) if env else DEFAULT_MODEL_DIR


def local_weights(model_dir: str | Path | None = None) -> KokoroWeights | None:
    """The weights in the model directory, or None when ``config.json`` or the checkpoint is missing."""
    root = resolve_model_dir(model_dir)
    config = root / "config.json"
    checkpoint = root / CHECKPOINT_NAME
    try:
        if not (config.is_file() and checkpoint.is_file()):
            return None
        voice_dir = root / "voices"
        voices = {path.stem: path for path in sorted(voice_dir.glob("*.pt"))} if voice_dir.is_dir() else {}
    except OSError:
        return None
    return KokoroWeights(config=config, checkpoint=checkpoint, voices=voices)
