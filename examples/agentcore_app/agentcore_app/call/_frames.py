"""The rules of a spoken call's frames (Leg 3 over WebSocket), as a sans-I/O state machine.

:class:`CallFrames` is given what the caller's connection brings (a text or binary frame, no frame for the
idle timeout), each with the time, and answers with actions for its asyncio adapter
(:mod:`agentcore_app.call._call`): send an event, open the listener, feed it audio, pass a typed turn or the
Stop button to the turn-taking core (:mod:`strands_voice.turns`, which holds every rule of who speaks when),
wait before reading on, close the call. It does no I/O; the time is passed in. It is also told when the
conversation is active (speech heard, an answer out: :meth:`CallFrames.active`), which only resets the idle
count and asks for nothing.

The rules (docs/PROTOCOL.md, "Leg 3 over WebSocket"):

- ``start`` comes first; anything else before it gets one ``invalid_request`` error (binary frames are
  dropped) and the call waits for ``start``. A ``start`` with a bad field or a rate other than 16 kHz
  gets ``invalid_request`` and the call still waits for a good one. A good one opens the listener and is
  answered with ``listening``; one whose ``listen_lang`` the server cannot hear gets
  ``unsupported_language`` first, and the call goes on with typed turns only.
- Binary frames are the caller's PCM16 audio: any size up to ``max_audio_frame_bytes`` (a larger one
  is dropped with ``invalid_request``), an odd trailing byte kept for the next frame. Audio is paced: a
  caller who sends faster than real time, more than ``max_audio_ahead_s`` ahead, is made to wait
  (:class:`Wait`: the adapter reads no frame until then), so no call takes more of the machine than a
  microphone would.
- ``prompt`` is a typed turn; ``interrupt`` is the Stop button.
- Audio with no speech and no answer for ``idle_s`` (or no frame at all for as long) ends the call:
  ``idle_timeout``, then a normal close.
- A bad JSON text frame gets ``invalid_json``; every error leaves the call going unless it says otherwise.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from starlette import status
from strands_voice_protocol.call_events import CALL_SAMPLE_RATE, CallEvent, CallEventBuilder
from strands_voice_protocol.languages import KOKORO_LANGUAGES, hearing_language

from strands_voice.turns import StopPressed, Typed

from ..payload import MAX_PROMPT_CHARS, CallStart, PayloadError, parse_call_start, parse_prompt

__all__ = [
    "MAX_FRAME_BYTES",
    "TRANSITIONS",
    "AudioFrame",
    "CallFrames",
    "CallLimits",
    "CallMove",
    "CallPhase",
    "CloseCall",
    "Feed",
    "FrameAction",
    "FrameInput",
    "Listen",
    "SendEvent",
    "Stalled",
    "TextFrame",
    "ToTurns",
    "Wait",
]

_BYTES_PER_SAMPLE: Final = 2
_BYTES_PER_SECOND: Final = CALL_SAMPLE_RATE * _BYTES_PER_SAMPLE
#: The largest WebSocket message the server reads for a call, before ``start`` too (the server's own
#: limit, uvicorn's ``ws_max_size``): a text frame of the longest prompt in 4-byte characters, with room.
MAX_FRAME_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class CallLimits:
    """What a call accepts.

    Attributes:
        max_audio_frame_bytes: The largest binary frame: 1 s of 16 kHz PCM16 by default (AgentCore Runtime
            carries WebSocket frames up to 32 KB).
        max_text_frame_chars: The largest text frame.
        max_prompt_chars: The longest typed prompt (and spoken turn, joined turns included).
        idle_s: Seconds of audio without speech and without an answer before the call ends (also the
            longest wait for any frame at all, which the adapter measures).
        max_audio_ahead_s: How far the caller's audio may run ahead of real time before the call waits.
        speculate: Start a spoken turn's answer, held, at a pause whose words look finished
            (:attr:`strands_voice.turns.TurnSettings.speculate`).
    """

    max_audio_frame_bytes: int = _BYTES_PER_SECOND
    max_text_frame_chars: int = MAX_PROMPT_CHARS + 4096
    max_prompt_chars: int = MAX_PROMPT_CHARS
    idle_s: float = 120.0
    max_audio_ahead_s: float = 2.0
    speculate: bool = True


class CallPhase(enum.Enum):
    """Where a call is."""

    AWAITING_START = "awaiting_start"
    LISTENING = "listening"
    CLOSED = "closed"


class CallMove(enum.Enum):
    """What moves a call from one phase to another."""

    STARTED = "started"  # a good start frame
    IDLE = "idle"  # nothing said for the idle timeout
    ENDED = "ended"  # the adapter cannot go on (the listener could not be opened)


_P, _M = CallPhase, CallMove

#: Every transition (the session core's, the turn detector's and the turn-taking core's style); a move a
#: phase has no row for leaves it where it is.
TRANSITIONS: Final[dict[tuple[CallPhase, CallMove], CallPhase]] = {
    (_P.AWAITING_START, _M.STARTED): _P.LISTENING,
    **{
        (phase, move): _P.CLOSED
        for phase in (_P.AWAITING_START, _P.LISTENING)
        for move in (_M.IDLE, _M.ENDED)
    },
}


# --- what happens (inputs) -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TextFrame:
    """A text frame from the caller."""

    text: str


@dataclass(frozen=True)
class AudioFrame:
    """A binary frame from the caller (its microphone)."""

    data: bytes


@dataclass(frozen=True)
class Stalled:
    """No frame at all came for the idle timeout."""


FrameInput = TextFrame | AudioFrame | Stalled

# --- what to do (actions) ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SendEvent:
    """Send ``event`` as a JSON text frame."""

    event: CallEvent


@dataclass(frozen=True)
class Listen:
    """Open the listener; the call's settings are ``start`` (``hears``: False: the caller's language is
    one the server cannot hear, the call takes typed turns only)."""

    start: CallStart
    hears: bool = True


@dataclass(frozen=True)
class Feed:
    """Give the listener this audio (whole samples)."""

    pcm: bytes


@dataclass(frozen=True)
class ToTurns:
    """Hand the turn-taking core a typed turn or the Stop button."""

    event: Typed | StopPressed


@dataclass(frozen=True)
class Wait:
    """Read no frame before ``until`` (the clock of :meth:`CallFrames.handle`): the audio is ahead."""

    until: float


@dataclass(frozen=True)
class CloseCall:
    """Close the call with this WebSocket code."""

    code: int
    reason: str


FrameAction = SendEvent | Listen | Feed | ToTurns | Wait | CloseCall


class CallFrames:
    """One call's frame rules (see the module docstring): :meth:`handle` an input, get the actions.

    Args:
        limits: What the call accepts.
        builder: Stamps the call's events (``t_ms`` since the call began).
    """

    def __init__(self, limits: CallLimits | None = None, builder: CallEventBuilder | None = None) -> None:
        self.limits = limits or CallLimits()
        self.builder = builder or CallEventBuilder()
        self.phase = CallPhase.AWAITING_START
        self.start: CallStart | None = None
        self._answering = False
        self._carry = b""
        self._quiet_bytes = 0  # audio bytes since the last speech, turn or answer
        self._audio_bytes = 0  # audio bytes since start (pacing)
        self._started_at = 0.0
        self._told_to_start = False

    def handle(self, event: FrameInput, now: float) -> list[FrameAction]:
        """What to do about ``event``, which came at ``now`` (seconds; nothing once the call is closed)."""
        return [] if self.phase is CallPhase.CLOSED else _HANDLERS[type(event)](self, event, now)

    def active(self, *, answering: bool) -> None:
        """The conversation is active (the caller's speech was heard, or an answer is out): not idle.

        Args:
            answering: Whether an answer is out (a caller may then listen in silence for any time).
        """
        if self.phase is not CallPhase.CLOSED:
            self._quiet_bytes, self._answering = 0, answering

    def close(self) -> None:
        """The call ends (its adapter could not go on: the listener could not be opened)."""
        self._move(CallMove.ENDED)

    def _move(self, move: CallMove) -> None:
        self.phase = TRANSITIONS.get((self.phase, move), self.phase)

    # --- frames ---------------------------------------------------------------------------------------

    def _error(self, code: str, message: str) -> SendEvent:
        return SendEvent(self.builder.error(code=code, message=message))

    def _text(self, frame: TextFrame, now: float) -> list[FrameAction]:
        if len(frame.text) > self.limits.max_text_frame_chars:
            message = f"text frames hold at most {self.limits.max_text_frame_chars} characters"
            return [self._error("invalid_request", message)]
        try:
            message = json.loads(frame.text)
        except (json.JSONDecodeError, RecursionError):
            return [self._error("invalid_json", "a text frame must be one JSON object")]
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "start":
            return self._start(message, now)
        if self.phase is CallPhase.AWAITING_START:
            return [self._error("invalid_request", 'send {"type": "start"} first')]
        if kind == "prompt":
            return self._prompt(message)
        if kind == "interrupt":
            return [ToTurns(StopPressed())]
        return [self._error("invalid_request", "'type' must be 'start', 'prompt' or 'interrupt'")]

    def _start(self, message: dict[str, Any], now: float) -> list[FrameAction]:
        if self.phase is not CallPhase.AWAITING_START:
            return [self._error("invalid_request", "the call has already started")]
        fields = {key: value for key, value in message.items() if key != "type"}
        try:
            start = parse_call_start(fields)
        except PayloadError as error:
            return [self._error("invalid_request", error.message)]
        self._move(CallMove.STARTED)
        self.start, self._quiet_bytes, self._started_at = start, 0, now
        if hearing_language(start.listen_lang) is None:
            heard = ", ".join(f"{letter} ({lang.name})" for letter, lang in KOKORO_LANGUAGES.items())
            said = f"cannot hear listen_lang {start.listen_lang!r}: typed turns only; it hears {heard}"
            return [self._error("unsupported_language", said), Listen(start, hears=False)]
        return [Listen(start)]

    def _prompt(self, message: dict[str, Any]) -> list[FrameAction]:
        unknown = sorted(str(key) for key in message if key not in ("type", "prompt"))
        if unknown:
            return [self._error("invalid_request", f"a prompt frame holds 'prompt' only, not {unknown}")]
        try:
            prompt = parse_prompt(message.get("prompt"), max_prompt_chars=self.limits.max_prompt_chars)
        except PayloadError as error:
            return [self._error("invalid_request", error.message)]
        self._quiet_bytes = 0
        return [ToTurns(Typed(prompt))]

    def _any_audio(self, frame: AudioFrame, now: float) -> list[FrameAction]:
        if self.phase is CallPhase.AWAITING_START:
            return self._audio_before_start(frame, now)
        return self._audio(frame, now)

    def _audio_before_start(self, frame: AudioFrame, now: float) -> list[FrameAction]:
        self._quiet_bytes += len(frame.data)
        if self._idle_reached():
            return self._idle(Stalled(), now)
        if self._told_to_start:
            return []  # one error is enough: a microphone sends many frames
        self._told_to_start = True
        return [self._error("invalid_request", 'audio before start: send {"type": "start"} first')]

    def _audio(self, frame: AudioFrame, now: float) -> list[FrameAction]:
        if len(frame.data) > self.limits.max_audio_frame_bytes:
            message = (
                f"audio frames hold at most {self.limits.max_audio_frame_bytes} bytes; this one was dropped"
            )
            return [self._error("invalid_request", message)]
        data = self._carry + frame.data
        whole = len(data) - len(data) % _BYTES_PER_SAMPLE
        self._carry = data[whole:]
        self._audio_bytes += whole
        if not self._answering:
            self._quiet_bytes += whole
            if self._idle_reached():
                return self._idle(Stalled(), now)
        actions: list[FrameAction] = [Feed(data[:whole])] if whole else []
        due = self._started_at + self._audio_bytes / _BYTES_PER_SECOND - self.limits.max_audio_ahead_s
        return [*actions, Wait(due)] if due > now else actions

    def _idle_reached(self) -> bool:
        return self._quiet_bytes > self.limits.idle_s * _BYTES_PER_SECOND

    def _stalled(self, event: Stalled, now: float) -> list[FrameAction]:
        if self._answering:
            return []  # a caller may listen in silence to a long answer: not idle
        return self._idle(event, now)

    def _idle(self, _event: Stalled, now: float) -> list[FrameAction]:
        self._move(CallMove.IDLE)
        message = f"nothing was said for {self.limits.idle_s:g} s; the call is closed"
        return [self._error("idle_timeout", message), CloseCall(status.WS_1000_NORMAL_CLOSURE, "idle")]


_Handler = Callable[[CallFrames, Any, float], list[FrameAction]]

#: Which handler takes each input (the phase table decides what each may change).
_HANDLERS: Final[dict[type, _Handler]] = {
    TextFrame: CallFrames._text,
    AudioFrame: CallFrames._any_audio,
    Stalled: CallFrames._stalled,
}
