"""The events of the endpoint's ``POST /invocations`` SSE transport (Leg 1), declared as in :mod:`.events`.

With ``transport: "sse"`` the endpoint streams Leg 3's ``audio_start``, ``audio_chunk`` and ``error``
(``audio_start`` and ``error`` with the request's ``request_id``) plus two of Leg 1's own frames as events,
``word_timestamps`` and ``synthesis_complete``: :class:`SynthesisEventBuilder` builds them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal, TypedDict, Unpack

from strands_voice_protocol.events import (
    AudioChunkEvent,
    AudioStartEvent,
    ErrorEvent,
    ErrorFields,
    EventBuilder,
    Timed,
)
from strands_voice_protocol.frames import WordJson, WordTiming, words_json

__all__ = [
    "SynthesisCompleteEvent",
    "SynthesisCompleteFields",
    "SynthesisEvent",
    "SynthesisEventBuilder",
    "WordTimestampsEvent",
    "WordTimestampsFields",
]


class _ForRequest(Timed):
    #: The request the event belongs to (the endpoint's SSE transport).
    request_id: str | None


class WordTimestampsFields(TypedDict):
    """Leg 1 SSE transport: ``word_timestamps``, before the audio of the segment the words are in."""

    words: list[WordJson]


class SynthesisCompleteFields(TypedDict):
    """Leg 1 SSE transport: ``synthesis_complete``, after the request's last ``audio_chunk``."""

    audio_bytes: int
    total_duration_s: float
    elapsed_s: float


class WordTimestampsEvent(_ForRequest, WordTimestampsFields):
    type: Literal["word_timestamps"]


class SynthesisCompleteEvent(_ForRequest, SynthesisCompleteFields):
    type: Literal["synthesis_complete"]


#: One event of the endpoint's ``POST /invocations`` SSE transport (Leg 1).
SynthesisEvent = AudioStartEvent | WordTimestampsEvent | AudioChunkEvent | ErrorEvent | SynthesisCompleteEvent


class SynthesisEventBuilder(EventBuilder):
    """Builds the events of the endpoint's ``POST /invocations`` SSE transport (Leg 1) for one request.

    ``audio_start`` and ``error`` carry the request's ``request_id``; ``audio_chunk`` is Leg 3's shape
    (``sentence`` is always 0: one request is one text); ``word_timestamps`` and ``synthesis_complete``
    are Leg 1's frames as events. ``t_ms`` counts from the builder's creation.

    Args:
        request_id: The request the events belong to.
        clock: A monotonic clock in seconds.
    """

    def __init__(self, request_id: str | None, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(clock)
        self.request_id = request_id

    def audio_start(self, *, format: str, sample_rate: int, channels: int = 1) -> AudioStartEvent:
        """``audio_start`` with the request's ``request_id``."""
        event = super().audio_start(format=format, sample_rate=sample_rate, channels=channels)
        event["request_id"] = self.request_id
        return event

    def error(self, **fields: Unpack[ErrorFields]) -> ErrorEvent:
        """``error`` with the request's ``request_id``."""
        event = super().error(**fields)
        event["request_id"] = self.request_id
        return event

    def word_timestamps(self, words: Sequence[WordTiming]) -> WordTimestampsEvent:
        """``word_timestamps``: the next segment's words, times from the request's first audio."""
        fields: WordTimestampsFields = {"words": words_json(list(words))}
        return {"type": "word_timestamps", "t_ms": self.t_ms(), "request_id": self.request_id, **fields}

    def synthesis_complete(self, **fields: Unpack[SynthesisCompleteFields]) -> SynthesisCompleteEvent:
        """``synthesis_complete``: the request's audio is all sent."""
        return {"type": "synthesis_complete", "t_ms": self.t_ms(), "request_id": self.request_id, **fields}
