"""Voice activity detection: the :class:`Vad` protocol and :class:`SileroVad` (ONNX on onnxruntime)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from strands_voice.listen._deps import import_extra

__all__ = ["SileroVad", "Vad", "silero_model_path"]

logger = logging.getLogger(__name__)

_CONTEXT: Final = 64  # samples of the previous frame Silero v5/v6 reads before each 512-sample frame
_FRAME: Final = 512


class Vad(Protocol):
    """Speech probability of consecutive frames of 16 kHz mono audio (stateful across calls).

    Attributes:
        frame_samples: Samples per frame :meth:`probability` takes.
    """

    frame_samples: int

    def probability(self, frame: npt.NDArray[np.float32]) -> float:
        """Speech probability (0..1) of the next frame (``frame_samples`` float32 samples in [-1, 1])."""

    def reset(self) -> None:
        """Forget the audio seen so far (a new stream)."""


def silero_model_path() -> Path:
    """The Silero VAD ONNX file faster-whisper ships (``faster_whisper/assets``)."""
    faster_whisper = import_extra("faster_whisper")
    assets = Path(str(faster_whisper.__file__)).parent / "assets"
    candidates = sorted(assets.glob("silero_vad*.onnx"))
    if not candidates:
        raise FileNotFoundError(f"no silero_vad*.onnx in {assets}")
    return candidates[-1]


_SESSIONS: dict[Path, Any] = {}
_SESSIONS_LOCK = threading.Lock()


def _shared_session(path: Path) -> Any:
    """One onnxruntime session per model file for every :class:`SileroVad` of the process (a call each):
    the weights in memory once. A session's ``run`` is thread-safe; each VAD keeps its own state."""
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(path)
        if session is None:
            ort: Any = import_extra("onnxruntime")
            options = ort.SessionOptions()
            options.inter_op_num_threads = 1
            options.intra_op_num_threads = 1
            options.log_severity_level = 4
            providers = ["CPUExecutionProvider"]
            session = ort.InferenceSession(str(path), providers=providers, sess_options=options)
            _SESSIONS[path] = session
            logger.debug("path=<%s> | silero vad loaded", path)
        return session


class SileroVad:
    """Silero VAD (v6, the file faster-whisper ships) run frame by frame on onnxruntime, one thread.

    Every instance of one model file shares its onnxruntime session (the state of the audio seen is each
    instance's own), so a process with many calls holds the model once.

    Args:
        model_path: The ONNX file (default: :func:`silero_model_path`).
    """

    frame_samples = _FRAME

    def __init__(self, model_path: Path | None = None) -> None:
        self._session = _shared_session((model_path or silero_model_path()).resolve())
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(_CONTEXT, dtype=np.float32)

    def reset(self) -> None:
        """Forget the audio seen so far."""
        self._h[:] = 0.0
        self._c[:] = 0.0
        self._context[:] = 0.0

    def probability(self, frame: npt.NDArray[np.float32]) -> float:
        """Speech probability of the next 512-sample frame."""
        if frame.shape != (_FRAME,):
            raise ValueError(f"frame must hold {_FRAME} samples, got {frame.shape}")
        batch = np.concatenate([self._context, frame.astype(np.float32, copy=False)])[None, :]
        out, self._h, self._c = self._session.run(None, {"input": batch, "h": self._h, "c": self._c})
        self._context = frame[-_CONTEXT:].astype(np.float32, copy=True)
        return float(np.asarray(out).reshape(-1)[0])
