"""The turn-end model: how likely the caller's turn is complete, judged from its audio.

:class:`SmartTurn` runs Smart Turn v3.2 (Daily's open model, BSD-2: a Whisper-tiny encoder with a
classifier head, 8 MB int8 ONNX, 23 languages) on onnxruntime. It reads the last 8 s of the
turn as Whisper log-mel features (80 bands, 10 ms hop), computed by faster-whisper's feature extractor on
the waveform normalized to zero mean and unit variance, the shorter turn padded with silence in front.

The model file ships inside the ``pipecat-ai`` wheel (``pipecat/audio/turn/smart_turn/data``), which the
``listen`` extra installs for it; it is found there without importing Pipecat. Without it,
:func:`default_turn_model` gives None and turns end by the silence timer.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import MissingDependencyError

from strands_voice.listen._deps import INSTALL_HINT, import_extra

__all__ = ["SmartTurn", "TurnModel", "default_turn_model", "smart_turn_model_path"]

logger = logging.getLogger(__name__)

_RATE: Final = 16000
_WINDOW_S: Final = 8
_MODEL_FILE: Final = "smart-turn-v3.2-cpu.onnx"


class TurnModel(Protocol):
    """A model of whether a turn is complete from its audio."""

    def probability(self, audio: npt.NDArray[np.float32]) -> float:
        """The probability (0..1) that the turn whose audio (16 kHz mono, float32 in [-1, 1], up to the
        pause) is ``audio`` is complete. Blocking: call it off the event loop."""


def smart_turn_model_path() -> Path:
    """Where the ``pipecat-ai`` wheel keeps Smart Turn v3.2 (found without importing Pipecat).

    Raises:
        MissingDependencyError: ``pipecat-ai`` is not installed.
    """
    spec = importlib.util.find_spec("pipecat")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / "audio" / "turn" / "smart_turn" / "data" / _MODEL_FILE
        if path.is_file():
            return path
    raise MissingDependencyError(f"the turn-end model ({_MODEL_FILE}) is missing: {INSTALL_HINT}")


class SmartTurn:
    """Smart Turn v3.2 on onnxruntime (see the module docstring).

    Args:
        model_path: The ONNX file (default: :func:`smart_turn_model_path`).
        threads: onnxruntime's intra-op threads. The listener runs the model after the recognizer, not
            beside it, so two share the work (33 ms a judgment instead of 40 on a 2-core Xeon:
            ``scripts/measure_pause_judgment.py``); the idle ones sleep instead of spinning, which would
            take the cores from the recognizer and the voice.
    """

    def __init__(self, model_path: Path | None = None, *, threads: int = 2) -> None:
        ort: Any = import_extra("onnxruntime")
        features: Any = import_extra("faster_whisper.feature_extractor")
        options = ort.SessionOptions()
        options.inter_op_num_threads = 1
        options.intra_op_num_threads = threads
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 4
        path = model_path or smart_turn_model_path()
        self._session = ort.InferenceSession(
            str(path), providers=["CPUExecutionProvider"], sess_options=options
        )
        self._features = features.FeatureExtractor(feature_size=80, chunk_length=_WINDOW_S)
        logger.debug("path=<%s> | turn-end model loaded", path)

    def probability(self, audio: npt.NDArray[np.float32]) -> float:
        """The probability that the turn is complete (see :class:`TurnModel`)."""
        window = _WINDOW_S * _RATE
        tail = np.asarray(audio, dtype=np.float32)[-window:]
        padded = np.zeros(window, dtype=np.float32)
        padded[window - tail.size :] = tail
        normalized = (padded - padded.mean()) / np.sqrt(padded.var() + 1e-7)
        mel = self._features(normalized, padding=0)[:, : window // 160]
        (logits,) = self._session.run(None, {"input_features": mel[np.newaxis].astype(np.float32)})
        return float(np.asarray(logits).reshape(-1)[0])


def default_turn_model() -> TurnModel | None:
    """Smart Turn when its file and onnxruntime are installed; None otherwise (the silence timer)."""
    try:
        return SmartTurn()
    except MissingDependencyError as error:
        logger.info("the turn-end model is not installed; turns end by the silence timer: %s", error)
        return None
