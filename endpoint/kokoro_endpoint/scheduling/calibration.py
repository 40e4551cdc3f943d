"""The engine's own synthesis rate on this machine, measured once at start-up (admission needs it before
the first listener arrives; the scheduler then updates it from every real step)."""

from __future__ import annotations

import logging
import time
from typing import Final

from kokoro_endpoint.engines.interface import Engine
from kokoro_endpoint.engines.pipeline import audio_seconds, synthesize_segments
from kokoro_endpoint.scheduling.interrupt import close_iterator
from kokoro_endpoint.settings import Settings

__all__ = ["CALIBRATION_TEXT", "measure_load"]

logger = logging.getLogger(__name__)

#: Two sentences of an ordinary answer: long enough to be decoded in several windows, as answers are.
CALIBRATION_TEXT: Final = (
    "Thanks for calling, I can help you with that right away. "
    "Your order left our warehouse this morning and should arrive on Thursday afternoon."
)
#: The most compute the measurement may take (a slow engine stops early, with what it measured).
MAX_COMPUTE_S: Final = 3.0


def measure_load(engine: Engine, settings: Settings, max_compute_s: float = MAX_COMPUTE_S) -> float:
    """Compute seconds per second of audio for an ordinary answer, the way requests are synthesized
    (segments, windows, the settings' silence policy); 0.0 when the engine produced no audio.

    Args:
        engine: The loaded, warmed engine.
        settings: The clause length and silence policy requests use.
        max_compute_s: Stop after this much compute.
    """
    seconds = audio_seconds(engine.sample_rate)
    steps = synthesize_segments(
        engine, CALIBRATION_TEXT, engine.default_voice, 1.0, settings.clause_chars, settings.silence
    )
    compute_s = audio_s = 0.0
    try:
        while compute_s < max_compute_s:
            began = time.perf_counter()
            output = next(steps, None)
            if output is None:
                break
            compute_s += time.perf_counter() - began
            audio_s += seconds(output)
    finally:
        close_iterator(steps)
    load = compute_s / audio_s if audio_s > 0 else 0.0
    logger.info("load=<%.3f>, audio_s=<%.2f> | measured the engine's rate", load, audio_s)
    return load
