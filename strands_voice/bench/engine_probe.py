"""Time the TTS engine in process: the floor that no transport can beat."""

from __future__ import annotations

import time
from typing import Any

__all__ = ["engine_first_segment_ms"]


def engine_first_segment_ms(
    engine: Any, text: str, *, voice: str, speed: float = 1.0, trials: int = 5, warmups: int = 1
) -> list[float]:
    """Time ``engine.synthesize(text)`` to its first segment, in process, ``trials`` times after warm-up.

    The generator is closed after the first segment, so the rest of the text is not synthesized.

    Args:
        engine: A loaded engine (``kokoro_endpoint.engines.Engine``).
        text: The text; the benchmark passes the first chunk the app sent to the endpoint.
        voice: The voice.
        speed: The speaking rate.
        trials: Timed runs.
        warmups: Untimed runs first.

    Returns:
        Milliseconds per timed run.
    """
    timings: list[float] = []
    for index in range(warmups + trials):
        started = time.perf_counter()
        segments = iter(engine.synthesize(text, voice, speed))
        try:
            next(segments)
            elapsed = time.perf_counter() - started
        finally:
            close = getattr(segments, "close", None)
            if close is not None:
                close()
        if index >= warmups:
            timings.append(elapsed * 1e3)
    return timings
