"""Where the model runs: ``--device auto|cuda|cpu``, and a loud start-up failure when a GPU was asked for.

SageMaker bills a GPU instance whether or not the model uses it. If the image's CUDA build is newer than
the host's NVIDIA driver, ``torch.cuda.is_available()`` is False and a torch engine left on ``auto`` would
quietly serve from the CPU, several times slower. The GPU image therefore runs with ``--device cuda``
(``KOKORO_DEVICE=cuda`` in ``endpoint/Dockerfile``): the process exits at start-up, with the versions
that disagree, before it answers ``/ping``, so the endpoint fails to deploy instead of serving slowly.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError

__all__ = ["DEVICES", "NoGpuError", "check_device", "engine_for_device"]

logger = logging.getLogger(__name__)

DEVICES: Final = ("auto", "cuda", "cpu")


class NoGpuError(RuntimeError):
    """``--device cuda`` was asked for and no usable GPU is visible."""


def engine_for_device(engine: str, device: str) -> str:
    """The engine kind to load for ``--engine`` and ``--device``.

    ``cuda`` needs the torch engine (the ONNX engine runs on the CPU only), so ``auto`` becomes ``torch``.

    Raises:
        ConfigurationError: an unknown device, or ``--engine onnx`` with ``--device cuda``.
    """
    if device not in DEVICES:
        raise ConfigurationError(f"device must be one of {', '.join(DEVICES)}")
    if device != "cuda":
        return engine
    if engine == "onnx":
        raise ConfigurationError(
            "--device cuda needs --engine torch (or auto): the onnx engine runs on the CPU"
        )
    return "torch"


def check_device(device: str, torch_module: Any | None = None) -> str | None:
    """Check that ``device`` can be used now; the torch device to load onto (None: the engine's choice).

    Args:
        device: ``auto``, ``cuda`` or ``cpu``.
        torch_module: ``torch`` (imported here when None and needed); tests pass a stand-in.

    Raises:
        NoGpuError: ``cuda`` and no GPU is visible, with torch's CUDA build in the message.
        MissingDependencyError: ``cuda`` and torch is not installed.
    """
    if device == "auto":
        return None
    if device == "cpu":
        return "cpu"
    torch = _import_torch() if torch_module is None else torch_module
    if not torch.cuda.is_available():
        built_for = getattr(torch.version, "cuda", None) or "no CUDA (a CPU-only build)"
        raise NoGpuError(
            f"--device cuda: no GPU is visible to torch {torch.__version__} (built for CUDA "
            f"{built_for}). Check that the instance has a GPU and that its NVIDIA driver supports this CUDA "
            "build (docs/endpoint.md, 'GPU image'); use --device auto to allow the CPU."
        )
    name = torch.cuda.get_device_name(0)
    logger.info("device=<cuda>, gpu=<%s>, cuda=<%s> | GPU visible", name, torch.version.cuda)
    return "cuda"


def _import_torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingDependencyError(
            "--device cuda needs torch: install kokoro-endpoint[torch] (uv sync --group torch)"
        ) from None
    return torch
