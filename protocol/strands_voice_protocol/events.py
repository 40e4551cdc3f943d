"""Leg 3 events (see PROTOCOL.md): each declared once, as the ``TypedDict`` of its fields.

Every event is a JSON object with ``"type"`` and ``"t_ms"`` (milliseconds since ``agent_start``). An
event's declaration is the ``TypedDict`` of its own fields (:class:`TextDeltaFields`: ``seq``, ``text``); its
type adds ``type`` and ``t_ms`` (:class:`TextDeltaEvent`). From that one declaration come:

* the type the code reads (``TextDeltaEvent``, one of the :data:`Event` union);
* its validation, :func:`parse_event`, which reads the field types from the declarations (``int``, a
  number for ``float``, ``str``, ``list``; ``X | None`` may be null or absent) with
  :class:`~strands_voice_protocol.event_shapes.EventShapes`;
* its builder method, whose keywords are the declaration (``EventBuilder.text_delta(**TextDeltaFields)``), and
  the wire rounding a field declares (``Annotated[float, Decimals(3)]``).

Introspection of ``TypedDict`` (:func:`typing.get_type_hints`) does it with no dependency: a schema library
(pydantic, msgspec) would validate the same shapes but add a dependency to a package both ends install,
for a dozen flat objects.

:class:`EventBuilder` holds the clock, so the code that produces events never computes times itself, and
it is the only code that builds an event: the library's speaker, response and handler, the example app and
the endpoint's SSE transport all call it.

The endpoint's SSE transport (Leg 1) builds its events, of the same shapes, in :mod:`.synthesis_events`.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from typing import Annotated, Final, Literal, NotRequired, TypedDict, TypeVar, Unpack, cast

from strands_voice_protocol.event_shapes import Decimals, EventShapes
from strands_voice_protocol.frames import WordJson, WordTiming, words_json

__all__ = [
    "EVENT_TYPES",
    "AgentEndEvent",
    "AgentEndFields",
    "AgentStartEvent",
    "AgentStartFields",
    "AudioChunkEvent",
    "AudioChunkFields",
    "AudioEndEvent",
    "AudioEndFields",
    "AudioStartEvent",
    "AudioStartFields",
    "ErrorEvent",
    "ErrorFields",
    "Event",
    "EventBuilder",
    "InterruptedEvent",
    "InterruptedFields",
    "SentenceCompleteEvent",
    "SentenceCompleteFields",
    "SentenceRestartEvent",
    "SentenceRestartFields",
    "TextDeltaEvent",
    "TextDeltaFields",
    "Timed",
    "WordsEvent",
    "WordsFields",
    "parse_event",
]


class Timed(TypedDict):
    """What every event carries besides its ``type`` and its declared fields."""

    #: Milliseconds since ``agent_start`` (since the request, on the endpoint's SSE transport).
    t_ms: float


class AgentStartFields(TypedDict):
    """``agent_start``: the response begins (``t_ms`` 0)."""

    mode: str
    request_id: str | None


class TextDeltaFields(TypedDict):
    """``text_delta``: one piece of the agent's text, as the model streamed it."""

    seq: int
    text: str


class AudioStartFields(TypedDict):
    """``audio_start``: sent once, before the first ``audio_chunk``.

    ``request_id`` only on the endpoint's SSE transport (Leg 1), where it names the request.
    """

    format: str
    sample_rate: int
    channels: int
    request_id: NotRequired[str | None]


class AudioChunkFields(TypedDict):
    """``audio_chunk``: encoded audio, base64 in ``data``, speaking text chunk ``sentence``."""

    seq: int
    sentence: int
    data: str


class SentenceCompleteFields(TypedDict):
    """``sentence_complete``: all audio of text chunk ``sentence`` has been sent."""

    sentence: int
    text: str
    duration_s: Annotated[float, Decimals(3)]


class WordsFields(TypedDict):
    """``words`` (project extension, when asked): a sentence's words, times from its first audio."""

    sentence: int
    words: list[WordJson]


class SentenceRestartFields(TypedDict):
    """``sentence_restart`` (project extension): sentence ``sentence``'s audio starts over.

    The TTS connection dropped mid-sentence: the ``dropped_s`` seconds of that sentence's audio already
    sent are void (a player drops what it still holds of them), and its ``audio_chunk`` events follow
    again from its start.
    """

    sentence: int
    dropped_s: Annotated[float, Decimals(3)]


class InterruptedFields(TypedDict):
    """``interrupted``: barge-in; what the caller heard, the sentences heard in full, the one cut."""

    heard_text: str
    sentences_done: list[int]
    sentence_cut: int | None


class AudioEndFields(TypedDict):
    """``audio_end``: no more audio for this response."""

    chunks: int
    duration_s: Annotated[float, Decimals(3)]


class AgentEndFields(TypedDict):
    """``agent_end``: the last event; times are ``t_ms`` values (None when there was no such event)."""

    ttfa_ms: float | None
    text_ms: float | None
    audio_ms: float | None


class ErrorFields(TypedDict):
    """``error``: something failed (text keeps flowing when only speech fails).

    ``request_id`` only on the endpoint's SSE transport (Leg 1).
    """

    code: str
    message: str
    request_id: NotRequired[str | None]


# Each event's type: its declaration, plus "type" and "t_ms".
class AgentStartEvent(Timed, AgentStartFields):
    type: Literal["agent_start"]


class TextDeltaEvent(Timed, TextDeltaFields):
    type: Literal["text_delta"]


class AudioStartEvent(Timed, AudioStartFields):
    type: Literal["audio_start"]


class AudioChunkEvent(Timed, AudioChunkFields):
    type: Literal["audio_chunk"]


class SentenceCompleteEvent(Timed, SentenceCompleteFields):
    type: Literal["sentence_complete"]


class WordsEvent(Timed, WordsFields):
    type: Literal["words"]


class SentenceRestartEvent(Timed, SentenceRestartFields):
    type: Literal["sentence_restart"]


class InterruptedEvent(Timed, InterruptedFields):
    type: Literal["interrupted"]


class AudioEndEvent(Timed, AudioEndFields):
    type: Literal["audio_end"]


class AgentEndEvent(Timed, AgentEndFields):
    type: Literal["agent_end"]


class ErrorEvent(Timed, ErrorFields):
    type: Literal["error"]


#: One Leg 3 event, in the order the types first appear in a response.
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

_LEG3: Final = EventShapes(Event)

#: Every Leg 3 event type, in the order they first appear in a response.
EVENT_TYPES: Final[tuple[str, ...]] = _LEG3.types


def parse_event(value: object) -> Event | None:
    """Check a decoded JSON value against the Leg 3 event declarations (what a client does with each event).

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
    return cast("Event | None", _LEG3.validate(value))


_E = TypeVar("_E", SentenceCompleteEvent, SentenceRestartEvent, AudioEndEvent)


class EventBuilder:
    """Builds Leg 3 events stamped with ``t_ms`` since the builder was created (``agent_start``'s time 0).

    Each method takes its event's declared fields as keywords and returns the event; a float field that
    declares :class:`~strands_voice_protocol.event_shapes.Decimals` is rounded to them.

    Args:
        clock: A monotonic clock in seconds; ``time.monotonic`` unless a test wants its own.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()

    def t_ms(self) -> float:
        """Milliseconds since the start, rounded to 0.1 ms."""
        return round((self._clock() - self._start) * 1000.0, 1)

    @staticmethod
    def _rounded(event: _E) -> _E:
        return cast(_E, _LEG3.rounded(event))

    def agent_start(self, **fields: Unpack[AgentStartFields]) -> AgentStartEvent:
        """``agent_start``: the response begins."""
        return {"type": "agent_start", "t_ms": self.t_ms(), **fields}

    def text_delta(self, **fields: Unpack[TextDeltaFields]) -> TextDeltaEvent:
        """``text_delta``: one piece of the agent's text, as the model streamed it."""
        return {"type": "text_delta", "t_ms": self.t_ms(), **fields}

    def audio_start(self, *, format: str, sample_rate: int, channels: int = 1) -> AudioStartEvent:
        """``audio_start``: sent once, before the first ``audio_chunk`` (mono unless told)."""
        fields: AudioStartFields = {"format": format, "sample_rate": sample_rate, "channels": channels}
        return {"type": "audio_start", "t_ms": self.t_ms(), **fields}

    def audio_chunk(self, *, seq: int, sentence: int, data: bytes) -> AudioChunkEvent:
        """``audio_chunk``: the encoded audio ``data`` (sent as base64) speaking text chunk ``sentence``."""
        fields: AudioChunkFields = {"seq": seq, "sentence": sentence, "data": base64.b64encode(data).decode()}
        return {"type": "audio_chunk", "t_ms": self.t_ms(), **fields}

    def sentence_complete(self, **fields: Unpack[SentenceCompleteFields]) -> SentenceCompleteEvent:
        """``sentence_complete``: all audio of text chunk ``sentence`` has been sent."""
        event: SentenceCompleteEvent = {"type": "sentence_complete", "t_ms": self.t_ms(), **fields}
        return self._rounded(event)

    def sentence_restart(self, **fields: Unpack[SentenceRestartFields]) -> SentenceRestartEvent:
        """``sentence_restart``: the TTS connection dropped mid-sentence; its audio starts over."""
        event: SentenceRestartEvent = {"type": "sentence_restart", "t_ms": self.t_ms(), **fields}
        return self._rounded(event)

    def words(self, *, sentence: int, words: Sequence[WordTiming]) -> WordsEvent:
        """Sentence ``sentence``'s words, times from its first audio (as Leg 1 ``word_timestamps``).

        Args:
            sentence: The index of the text chunk the words belong to (as in ``audio_chunk``).
            words: The words; ``char_*`` index that sentence's text as it was sent for synthesis.
        """
        return {"type": "words", "t_ms": self.t_ms(), "sentence": sentence, "words": words_json(list(words))}

    def audio_end(self, **fields: Unpack[AudioEndFields]) -> AudioEndEvent:
        """``audio_end``: no more audio for this response."""
        event: AudioEndEvent = {"type": "audio_end", "t_ms": self.t_ms(), **fields}
        return self._rounded(event)

    def interrupted(self, **fields: Unpack[InterruptedFields]) -> InterruptedEvent:
        """``interrupted``: barge-in; what the caller heard, the sentences heard in full, the one cut."""
        return {"type": "interrupted", "t_ms": self.t_ms(), **fields}

    def agent_end(self, **fields: Unpack[AgentEndFields]) -> AgentEndEvent:
        """``agent_end``: the last event; times are ``t_ms`` values (None when there was no such event)."""
        return {"type": "agent_end", "t_ms": self.t_ms(), **fields}

    def error(self, **fields: Unpack[ErrorFields]) -> ErrorEvent:
        """``error``: something failed (text keeps flowing when only speech fails)."""
        return {"type": "error", "t_ms": self.t_ms(), **fields}
