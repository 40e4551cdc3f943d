"""The events of Leg 3 over WebSocket (PROTOCOL.md, "the caller speaks"), declared as in :mod:`.events`.

On ``WS /ws`` the server sends every Leg 3 event of an answer (``agent_start`` ... ``agent_end``, except
``audio_chunk``, whose bytes travel as binary frames) plus the call's own: ``listening`` (ready for audio,
the answer to ``start``), ``speech_start`` (the caller started speaking), ``transcript`` (what the
recognizer heard so far; a ``final`` one ends the caller's turn and says why, ``end_of_turn``), and the
pause-then-decide pair of v1.3: ``speech_paused`` (the caller's first sound over an answer: a player stops
at once and keeps its buffer) and ``speech_resumed`` (it was a backchannel or a noise: play on).
:class:`CallEventBuilder` builds them with the same clock rules as
:class:`~strands_voice_protocol.events.EventBuilder` (``t_ms`` since the call began);
:func:`parse_call_event` checks one JSON text frame as a client reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, NotRequired, TypedDict, Unpack, cast, get_args

from strands_voice_protocol.event_shapes import EventShapes
from strands_voice_protocol.events import Event, EventBuilder, Timed, parse_event

__all__ = [
    "CALL_ERROR_CODES",
    "CALL_PATH",
    "CALL_SAMPLE_RATE",
    "CallErrorCode",
    "CallEvent",
    "CallEventBuilder",
    "EndOfTurnFields",
    "ListeningEvent",
    "ListeningFields",
    "SpeechHeldFields",
    "SpeechPausedEvent",
    "SpeechResumedEvent",
    "SpeechStartEvent",
    "SpeechStartFields",
    "TranscriptEvent",
    "TranscriptFields",
    "ends_turn",
    "parse_call_event",
]

#: The route of a spoken call on the agent runtime (AgentCore's WebSocket route).
CALL_PATH: Final = "/ws"
#: The caller's microphone audio: PCM16 mono little-endian at this rate (the only one accepted).
CALL_SAMPLE_RATE: Final = 16_000

#: A call's own ``error`` codes, beside the Leg 3 ones (``invalid_request``, ``invalid_json``, ...): the
#: caller stayed silent past the idle timeout (the call then closes), spoke past the longest turn, or a
#: turn's words could not be recognized (the recognizer failed; the call goes on).
CallErrorCode = Literal["idle_timeout", "turn_too_long", "recognition_failed"]
#: Every :data:`CallErrorCode`.
CALL_ERROR_CODES: Final[frozenset[str]] = frozenset(get_args(CallErrorCode))


class ListeningFields(TypedDict):
    """``listening``: ready for the caller's audio (the answer to ``start``).

    ``session_id`` (project extension): the conversation the call speaks in (the one it named, or a new one).
    ``listen_lang`` (v1.4): the language the caller is heard in (as ``start`` said it, else the answers').
    """

    sample_rate: int
    session_id: NotRequired[str]
    listen_lang: NotRequired[str]


class SpeechStartFields(TypedDict):
    """``speech_start``: the caller started speaking (past the minimum speech length).

    ``at_s`` is where in the call's audio the speech began (seconds of audio since ``start``).
    """

    at_s: float


class EndOfTurnFields(TypedDict):
    """Why a turn ended: ``by`` ``"model"`` (the turn-end model judged it complete), ``"silence"`` (the
    silence timer) or ``"max_turn"`` (the longest turn); ``p``: the model's probability that it was
    complete, when a model judged it."""

    by: str
    p: NotRequired[float]


class TranscriptFields(TypedDict):
    """``transcript``: what the recognizer heard so far; ``final: true`` ends the caller's turn.

    ``end_of_turn`` (v1.3): on a final, why the turn ended. ``counts`` (project): ``false`` on a final that
    is no turn of the conversation (a backchannel or a noise said over the answer, which goes on); absent
    otherwise.
    """

    role: str
    text: str
    final: bool
    end_of_turn: NotRequired[EndOfTurnFields]
    counts: NotRequired[bool]


class SpeechHeldFields(TypedDict):
    """``speech_paused`` / ``speech_resumed`` (v1.3): the answer ``request_id`` held, or going on;
    ``heard_ms``: its audio played so far, by the server's count (paused time not counted)."""

    request_id: str
    heard_ms: float


class ListeningEvent(Timed, ListeningFields):
    type: Literal["listening"]


class SpeechStartEvent(Timed, SpeechStartFields):
    type: Literal["speech_start"]


class TranscriptEvent(Timed, TranscriptFields):
    type: Literal["transcript"]


class SpeechPausedEvent(Timed, SpeechHeldFields):
    type: Literal["speech_paused"]


class SpeechResumedEvent(Timed, SpeechHeldFields):
    type: Literal["speech_resumed"]


#: The call's own events.
_CallOnly = ListeningEvent | SpeechStartEvent | TranscriptEvent | SpeechPausedEvent | SpeechResumedEvent
#: One text frame of a call: the call's own events and every Leg 3 event.
CallEvent = _CallOnly | Event

_CALL: Final = EventShapes(_CallOnly)


def parse_call_event(value: object) -> CallEvent | None:
    """Check one decoded JSON text frame of a call (a call event, else a Leg 3 event).

    Returns:
        The event, typed; None for a type this version does not know.

    Raises:
        ValueError: Not a JSON object with a string ``type``, or a known event with a missing or
            mistyped field (the message names it).
    """
    own = _CALL.validate(value)
    if own is not None:
        return cast(CallEvent, own)
    return parse_event(value)


def ends_turn(event: Mapping[str, object]) -> bool:
    """Whether a decoded call event is the caller's final transcript that ends a turn (not one that counts
    for no turn: a backchannel or a noise said over the answer, ``counts: false``)."""
    return (
        event.get("type") == "transcript"
        and bool(event.get("final"))
        and event.get("role", "user") == "user"
        and event.get("counts", True) is not False
    )


class CallEventBuilder(EventBuilder):
    """Builds a call's events, ``t_ms`` counting from the builder's creation (the call's start)."""

    def listening(self, **fields: Unpack[ListeningFields]) -> ListeningEvent:
        """``listening``: ready for the caller's audio."""
        return {"type": "listening", "t_ms": self.t_ms(), **fields}

    def speech_start(self, *, at_s: float) -> SpeechStartEvent:
        """``speech_start``: the caller started speaking ``at_s`` seconds into the call's audio."""
        return {"type": "speech_start", "t_ms": self.t_ms(), "at_s": round(at_s, 3)}

    def transcript(
        self, *, text: str, final: bool, end_of_turn: EndOfTurnFields | None = None, counts: bool = True
    ) -> TranscriptEvent:
        """``transcript``: the caller's words so far (``role`` is always ``user``), why a final one ended,
        and whether it is a turn (``counts: false`` only on one that is not)."""
        event: TranscriptEvent = {
            "type": "transcript",
            "t_ms": self.t_ms(),
            "role": "user",
            "text": text,
            "final": final,
        }
        if end_of_turn is not None:
            event["end_of_turn"] = end_of_turn
        if not counts:
            event["counts"] = False
        return event

    def speech_paused(self, **fields: Unpack[SpeechHeldFields]) -> SpeechPausedEvent:
        """``speech_paused``: the answer is held (the caller may be barging in)."""
        return {"type": "speech_paused", "t_ms": self.t_ms(), **fields}

    def speech_resumed(self, **fields: Unpack[SpeechHeldFields]) -> SpeechResumedEvent:
        """``speech_resumed``: the answer goes on from where it was held."""
        return {"type": "speech_resumed", "t_ms": self.t_ms(), **fields}
