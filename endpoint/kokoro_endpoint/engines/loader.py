"""Load a speech engine: Kokoro-82M on onnxruntime (int8) or on PyTorch.

``load_engine("onnx")`` is the offline default (tests, CI, laptops); ``load_engine("torch")`` runs the
full-precision model with ``kokoro`` on CUDA when present; ``load_engine("auto")`` takes torch when local
weights exist (and torch is installed), else onnx.
"""

from __future__ import annotations

import logging
from pathlib import Path

from strands_voice_protocol.errors import ConfigurationError

from kokoro_endpoint.engines.interface import Engine

__all__ = ["ENGINE_KINDS", "choose_engine_kind", "load_engine"]

logger = logging.getLogger(__name__)

ENGINE_KINDS = ("auto", "onnx", "torch")


def load_engine(
    kind: str = "auto",
    model_dir: str | Path | None = None,
    device: str | None = None,
    voices: str | Path | None = None,
) -> Engine:
    """Load a Kokoro-82M engine.

    Args:
        kind: ``"onnx"``, ``"torch"`` or ``"auto"`` (torch when local weights exist and torch is
            installed, else onnx).
        model_dir: Where the torch weights are (``config.json``, ``kokoro-v1_0.pth``, ``voices/*.pt``);
            defaults to ``$SM_MODEL_DIR`` or ``/opt/ml/model``.
        device: The torch engine's device (``cuda``/``cpu``); None lets it choose (CUDA when available).
        voices: The onnx engine's Kokoro voice files (a directory of ``NAME.bin`` or an ``.npz`` bundle);
            None reads ``$KOKORO_VOICES``. The torch engine reads ``voices/*.pt`` from ``model_dir``.

    Returns:
        The loaded (not yet warmed) engine.

    Raises:
        ConfigurationError: unknown kind, or ``voices`` holds no voice.
        MissingDependencyError: the engine's packages are not installed.
    """
    kind = choose_engine_kind(kind, model_dir)
    if kind == "onnx":
        from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine

        return OnnxEngine.load(voices=voices)
    from kokoro_endpoint.engines.torch_engine import TorchEngine

    return TorchEngine.load(model_dir, device)


def choose_engine_kind(kind: str, model_dir: str | Path | None = None) -> str:
    """Resolve ``auto``: ``torch`` when local weights exist and torch + kokoro are installed, else ``onnx``.

    Raises:
        ConfigurationError: unknown kind.
    """
    if kind not in ENGINE_KINDS:
        raise ConfigurationError(f"engine must be one of {', '.join(ENGINE_KINDS)}")
    if kind != "auto":
        return kind
    from kokoro_endpoint.engines.weights import local_weights

    chosen = "torch" if local_weights(model_dir) is not None and _torch_installed() else "onnx"
    logger.info("engine=<%s> | auto-selected", chosen)
    return chosen


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("kokoro") is not None
