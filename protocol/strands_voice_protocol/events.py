"""Leg 3 events: their types (one ``TypedDict`` each) and the one builder that makes them (see PROTOCOL.md).

Every event is a JSON object with ``"type"`` and ``"t_ms"`` (milliseconds since ``agent_start``).
:class:`EventBuilder` holds the clock, so the code that produces events never computes times itself, and
it is the only code that builds an event: the library's speaker, response and handler, the example app and
the endpoint's SSE transport all call it.

The endpoint's ``POST /invocations`` with ``transport: "sse"`` (Leg 1) streams events of the same shapes
(``audio_start``, ``audio_chunk``, ``error``, each with the request's ``request_id``) plus two of Leg 1's own
(``word_timestamps``, ``synthesis_complete``): :class:`SynthesisEventBuilder` builds those.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from typing import Final, Literal, NotRequired, TypedDict, cast, get_args

from strands_voice_protocol.frames import WordJson, WordTiming, words_json

__all__ = [
    "EVENT_TYPES",
    "AgentEndEvent",
    "AgentStartEvent",
    "AudioChunkEvent",
    "AudioEndEvent",
    "AudioStartEvent",
    "ErrorEvent",
    "Event",
    "EventBuilder",
    "EventType",
    "InterruptedEvent",
    "SentenceCompleteEvent",
    "SentenceRestartEvent",
    "SynthesisCompleteEvent",
    "SynthesisEvent",
    "SynthesisEventBuilder",
    "TextDeltaEvent",
    "WordTimestampsEvent",
    "WordsEvent",
    "parse_event",
]

#: A Leg 3 event's ``type``, in the order the types first appear in a response.
EventType = Literal[
    "agent_start",
    "text_delta",
    "audio_start",
    "audio_chunk",
    "sentence_complete",
    "words",
    "sentence_restart",
    "interrupted",
    "audio_end",
    "agent_end",
    "error",
]

#: Every Leg 3 event type, in the order they first appear in a response.
EVENT_TYPES: Final[tuple[EventType, ...]] = get_args(EventType)


class AgentStartEvent(TypedDict):
    """``agent_start``: the response begins (``t_ms`` 0)."""

    type: Literal["agent_start"]
    t_ms: float
    mode: str
    request_id: str | None


class TextDeltaEvent(TypedDict):
    """``text_delta``: one piece of the agent's text, as the model streamed it."""

    type: Literal["text_delta"]
    t_ms: float
    seq: int
    text: str


class AudioStartEvent(TypedDict):
    """``audio_start``: sent once, before the first ``audio_chunk``.

    ``request_id`` only on the endpoint's SSE transport (Leg 1), where it names the request.
    """

    type: Literal["audio_start"]
    t_ms: float
    format: str
    sample_rate: int
    channels: int
    request_id: NotRequired[str | None]


class AudioChunkEvent(TypedDict):
    """``audio_chunk``: encoded audio, base64 in ``data``, speaking text chunk ``sentence``."""

    type: Literal["audio_chunk"]
    t_ms: float
    seq: int
    sentence: int
    data: str


class SentenceCompleteEvent(TypedDict):
    """``sentence_complete``: all audio of text chunk ``sentence`` has been sent."""

    type: Literal["sentence_complete"]
    t_ms: float
    sentence: int
    text: str
    duration_s: float


class WordsEvent(TypedDict):
    """``words`` (project extension, when asked): a sentence's words, times from its first audio."""

    type: Literal["words"]
    t_ms: float
    sentence: int
    words: list[WordJson]


class SentenceRestartEvent(TypedDict):
    """``sentence_restart`` (project extension): sentence ``sentence``'s audio starts over."""

    type: Literal["sentence_restart"]
    t_ms: float
    sentence: int
    dropped_s: float


class InterruptedEvent(TypedDict):
    """``interrupted``: barge-in; what the caller heard, the sentences heard in full, the one cut."""

    type: Literal["interrupted"]
    t_ms: float
    heard_text: str
    sentences_done: list[int]
    sentence_cut: int | None


class AudioEndEvent(TypedDict):
    """``audio_end``: no more audio for this response."""

    type: Literal["audio_end"]
    t_ms: float
    chunks: int
    duration_s: float


class AgentEndEvent(TypedDict):
    """``agent_end``: the last event; times are ``t_ms`` values (None when there was no such event)."""

    type: Literal["agent_end"]
    t_ms: float
    ttfa_ms: float | None
    text_ms: float | None
    audio_ms: float | None


class ErrorEvent(TypedDict):
    """``error``: something failed (text keeps flowing when only speech fails).

    ``request_id`` only on the endpoint's SSE transport (Leg 1).
    """

    type: Literal["error"]
    t_ms: float
    code: str
    message: str
    request_id: NotRequired[str | None]


#: One Leg 3 event.
Event = (
    AgentStartEvent
    | TextDeltaEvent
    | AudioStartEvent
    | AudioChunkEvent
    | SentenceCompleteEvent
    | WordsEvent
    | SentenceRestartEvent
    | InterruptedEvent
    | AudioEndEvent
    | AgentEndEvent
    | ErrorEvent
)


class WordTimestampsEvent(TypedDict):
    """Leg 1 SSE transport: ``word_timestamps``, before the audio of the segment the words are in."""

    type: Literal["word_timestamps"]
    t_ms: float
    request_id: str | None
    words: list[WordJson]


class SynthesisCompleteEvent(TypedDict):
    """Leg 1 SSE transport: ``synthesis_complete``, after the request's last ``audio_chunk``."""

    type: Literal["synthesis_complete"]
    t_ms: float
    request_id: str | None
    audio_bytes: int
    total_duration_s: float
    elapsed_s: float


#: One event of the endpoint's ``POST /invocations`` SSE transport (Leg 1).
SynthesisEvent = AudioStartEvent | WordTimestampsEvent | AudioChunkEvent | ErrorEvent | SynthesisCompleteEvent


_NUMBER: Final = (int, float)
# The fields each Leg 3 event must carry (besides "type" and "t_ms"), with their JSON types.
_FIELDS: Final[dict[str, dict[str, tuple[type, ...]]]] = {
    "agent_start": {"mode": (str,)},
    "text_delta": {"seq": (int,), "text": (str,)},
    "audio_start": {"format": (str,), "sample_rate": (int,), "channels": (int,)},
    "audio_chunk": {"seq": (int,), "sentence": (int,), "data": (str,)},
    "sentence_complete": {"sentence": (int,), "text": (str,), "duration_s": _NUMBER},
    "words": {"sentence": (int,), "words": (list,)},
    "sentence_restart": {"sentence": (int,), "dropped_s": _NUMBER},
    "interrupted": {"heard_text": (str,), "sentences_done": (list,)},
    "audio_end": {"chunks": (int,), "duration_s": _NUMBER},
    "agent_end": {},
    "error": {"code": (str,), "message": (str,)},
}
# Fields that may be null, when present.
_NULLABLE: Final[dict[str, dict[str, tuple[type, ...]]]] = {
    "agent_start": {"request_id": (str,)},
    "interrupted": {"sentence_cut": (int,)},
    "agent_end": {"ttfa_ms": _NUMBER, "text_ms": _NUMBER, "audio_ms": _NUMBER},
}


def _is(value: object, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool)


def parse_event(value: object) -> Event | None:
    """Check a decoded JSON value against the Leg 3 event shapes (what a client does with each event).

    Fields beyond the contract's are kept; an event type this version does not know is not an error (a
    newer server may send more): it gives None, for the caller to skip.

    Args:
        value: One SSE event's ``data``, parsed as JSON.

    Returns:
        The event, typed; None for an event type this version does not know.

    Raises:
        ValueError: ``value`` is not a JSON object with a string ``type``, or a known event lacks a field
            (``t_ms`` included) or carries one of the wrong JSON type. The message names the field.
    """
    if not isinstance(value, dict):
        raise ValueError("a Leg 3 event must be a JSON object")
    kind = value.get("type")
    if not isinstance(kind, str):
        raise ValueError("a Leg 3 event needs a string 'type'")
    if kind not in _FIELDS:
        return None
    if not _is(value.get("t_ms"), _NUMBER):
        raise ValueError(f"a {kind} event needs a number 't_ms'")
    for name, kinds in _FIELDS[kind].items():
        if not _is(value.get(name), kinds):
            raise ValueError(f"a {kind} event needs {kinds[0].__name__} {name!r}")
    for name, kinds in _NULLABLE.get(kind, {}).items():
        field = value.get(name)
        if field is not None and not _is(field, kinds):
            raise ValueError(f"a {kind} event's {name!r} must be {kinds[0].__name__} or null")
    return cast(Event, value)


class EventBuilder:
    """Builds Leg 3 events stamped with ``t_ms`` since the builder was created (``agent_start``'s time 0).

    Args:
        clock: A monotonic clock in seconds; ``time.monotonic`` unless a test wants its own.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()

    def t_ms(self) -> float:
        """Milliseconds since the start, rounded to 0.1 ms."""
        return round((self._clock() - self._start) * 1000.0, 1)

    def agent_start(self, *, mode: str, request_id: str | None) -> AgentStartEvent:
        """``agent_start``: the response begins."""
        return {"type": "agent_start", "t_ms": self.t_ms(), "mode": mode, "request_id": request_id}

    def text_delta(self, *, seq: int, text: str) -> TextDeltaEvent:
        """``text_delta``: one piece of the agent's text, as the model streamed it."""
        return {"type": "text_delta", "t_ms": self.t_ms(), "seq": seq, "text": text}

    def audio_start(self, *, format: str, sample_rate: int, channels: int = 1) -> AudioStartEvent:
        """``audio_start``: sent once, before the first ``audio_chunk``."""
        return {
            "type": "audio_start",
            "t_ms": self.t_ms(),
            "format": format,
            "sample_rate": sample_rate,
            "channels": channels,
        }

    def audio_chunk(self, *, seq: int, sentence: int, data: bytes) -> AudioChunkEvent:
        """``audio_chunk``: encoded audio (base64 in ``data``) speaking text chunk ``sentence``."""
        return {
            "type": "audio_chunk",
            "t_ms": self.t_ms(),
            "seq": seq,
            "sentence": sentence,
            "data": base64.b64encode(data).decode("ascii"),
        }

    def sentence_complete(self, *, sentence: int, text: str, duration_s: float) -> SentenceCompleteEvent:
        """``sentence_complete``: all audio of text chunk ``sentence`` has been sent."""
        return {
            "type": "sentence_complete",
            "t_ms": self.t_ms(),
            "sentence": sentence,
            "text": text,
            "duration_s": round(duration_s, 3),
        }

    def sentence_restart(self, *, sentence: int, dropped_s: float) -> SentenceRestartEvent:
        """``sentence_restart``: the TTS connection dropped mid-sentence; its audio starts over.

        The ``dropped_s`` seconds of that sentence's audio already sent are void: a player drops what it
        still holds of them. The sentence's ``audio_chunk`` events follow again from its start.
        """
        return {
            "type": "sentence_restart",
            "t_ms": self.t_ms(),
            "sentence": sentence,
            "dropped_s": round(dropped_s, 3),
        }

    def words(self, *, sentence: int, words: Sequence[WordTiming]) -> WordsEvent:
        """Sentence ``sentence``'s words, times from its first audio (as Leg 1 ``word_timestamps``).

        Args:
            sentence: The index of the text chunk the words belong to (as in ``audio_chunk``).
            words: The words; ``char_*`` index that sentence's text as it was sent for synthesis.
        """
        return {"type": "words", "t_ms": self.t_ms(), "sentence": sentence, "words": words_json(list(words))}

    def audio_end(self, *, chunks: int, duration_s: float) -> AudioEndEvent:
        """``audio_end``: no more audio for this response."""
        return {
            "type": "audio_end",
            "t_ms": self.t_ms(),
            "chunks": chunks,
            "duration_s": round(duration_s, 3),
        }

    def interrupted(
        self, *, heard_text: str, sentences_done: list[int], sentence_cut: int | None
    ) -> InterruptedEvent:
        """``interrupted``: barge-in; what the caller heard, the sentences heard in full, the one cut."""
        return {
            "type": "interrupted",
            "t_ms": self.t_ms(),
            "heard_text": heard_text,
            "sentences_done": sentences_done,
            "sentence_cut": sentence_cut,
        }

    def agent_end(
        self, *, ttfa_ms: float | None, text_ms: float | None, audio_ms: float | None
    ) -> AgentEndEvent:
        """``agent_end``: the last event; times are ``t_ms`` values (None when there was no such event)."""
        return {
            "type": "agent_end",
            "t_ms": self.t_ms(),
            "ttfa_ms": ttfa_ms,
            "text_ms": text_ms,
            "audio_ms": audio_ms,
        }

    def error(self, *, code: str, message: str) -> ErrorEvent:
        """``error``: something failed (text keeps flowing when only speech fails)."""
        return {"type": "error", "t_ms": self.t_ms(), "code": code, "message": message}


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

    def error(self, *, code: str, message: str) -> ErrorEvent:
        """``error`` with the request's ``request_id``."""
        event = super().error(code=code, message=message)
        event["request_id"] = self.request_id
        return event

    def word_timestamps(self, words: Sequence[WordTiming]) -> WordTimestampsEvent:
        """``word_timestamps``: the next segment's words, times from the request's first audio."""
        return {
            "type": "word_timestamps",
            "t_ms": self.t_ms(),
            "request_id": self.request_id,
            "words": words_json(list(words)),
        }

    def synthesis_complete(
        self, *, audio_bytes: int, total_duration_s: float, elapsed_s: float
    ) -> SynthesisCompleteEvent:
        """``synthesis_complete``: the request's audio is all sent."""
        return {
            "type": "synthesis_complete",
            "t_ms": self.t_ms(),
            "request_id": self.request_id,
            "audio_bytes": audio_bytes,
            "total_duration_s": total_duration_s,
            "elapsed_s": elapsed_s,
        }
