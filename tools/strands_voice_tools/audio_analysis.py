"""What a listener hears: when the first audible sound of a recorded answer plays.

The analysis itself (:class:`FirstHeard`, :func:`first_audible_sample`) lives in the protocol's
:mod:`strands_voice_protocol.audio.audible`, so the library's traces measure it the same way; this module
applies it to a recorded Leg 3 answer.
"""

from __future__ import annotations

from strands_voice_protocol.audio.audible import (
    AUDIBLE_DBFS,
    AUDIBLE_WINDOW_S,
    FirstHeard,
    first_audible_sample,
    pcm16_to_float,
)
from strands_voice_protocol.frames import DEFAULT_SAMPLE_RATE
from strands_voice_protocol.leg3_client import ModeResult

__all__ = [
    "AUDIBLE_DBFS",
    "AUDIBLE_WINDOW_S",
    "FirstHeard",
    "first_audible_sample",
    "first_heard_s",
    "pcm16_to_float",
]


def first_heard_s(result: ModeResult, sample_rate: int = DEFAULT_SAMPLE_RATE) -> float | None:
    """When the first audible sound of a recorded Leg 3 answer plays, in its client seconds.

    Its ``audio_chunk`` events are played as they arrived (see :class:`FirstHeard`).

    Returns:
        The time, or None when the answer is not ``pcm16`` or nothing audible arrived.
    """
    if result.format != "pcm16":
        return None
    heard = FirstHeard(sample_rate)
    for chunk in result.audio:
        if heard.feed(chunk.arrival_s, chunk.data) is not None:
            break
    return heard.heard_at
