"""The rules of one spoken call (Leg 3 over WebSocket), as a sans-I/O state machine.

:class:`CallCore` is given what happens (a text or binary frame from the caller, no frame for the idle
timeout, what the listener heard as the library's :mod:`strands_voice.listen` events, an answer that
ended) and answers each with actions for its asyncio adapter (:mod:`agentcore_app.call`) to perform:
send an event, open the listener, feed it audio, answer a turn, interrupt the answer being spoken, close
the call. It holds no clock (time is audio counted in bytes) and does no I/O, so every rule is tested
without a socket.

The rules (docs/PROTOCOL.md, "Leg 3 over WebSocket"):

- ``start`` comes first; anything else before it gets one ``invalid_request`` error (binary frames are
  dropped) and the call waits for ``start``. A ``start`` with a bad field or a rate other than 16 kHz
  gets ``invalid_request`` and the call still waits for a good one. A good one opens the listener and is
  answered with ``listening``.
- Binary frames are the caller's PCM16 audio: any size up to ``max_audio_frame_bytes`` (a larger one
  is dropped with ``invalid_request``), an odd trailing byte kept for the next frame.
- ``prompt`` is a typed turn, answered like a spoken one; ``interrupt`` barges in on the answer.
- The listener's ``speech_start`` during an answer barges in on it (the caller speaks over the agent);
  a final ``transcript`` with words starts the turn's answer; a turn past the longest gets
  ``turn_too_long``; a turn the recognizer failed on gets ``recognition_failed`` (the call goes on).
- Audio with no speech and no answer for ``idle_s`` (or no frame at all for as long) ends the call:
  ``idle_timeout``, then a normal close.
- A bad JSON text frame gets ``invalid_json``; every error leaves the call going unless it says otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from starlette import status
from strands_voice_protocol.call_events import CALL_SAMPLE_RATE, CallEvent, CallEventBuilder

from strands_voice.listen import RecognitionFailed, SpeechStarted, Transcript, TurnTooLong

from .payload import MAX_PROMPT_CHARS, CallStart, PayloadError, parse_call_start, parse_prompt

__all__ = [
    "Answer",
    "AnswerEnded",
    "AudioFrame",
    "CallAction",
    "CallCore",
    "CallInput",
    "CallLimits",
    "Close",
    "Feed",
    "Heard",
    "Interrupt",
    "Listen",
    "Phase",
    "Send",
    "Stalled",
    "TextFrame",
]

_BYTES_PER_SAMPLE: Final = 2


@dataclass(frozen=True)
class CallLimits:
    """What a call accepts.

    Attributes:
        max_audio_frame_bytes: The largest binary frame: 1 s of 16 kHz PCM16 by default (AgentCore Runtime
            carries WebSocket frames up to 32 KB).
        max_text_frame_chars: The largest text frame.
        max_prompt_chars: The longest typed prompt.
        idle_s: Seconds of audio without speech and without an answer before the call ends (also the
            longest wait for any frame at all, which the adapter measures).
    """

    max_audio_frame_bytes: int = CALL_SAMPLE_RATE * _BYTES_PER_SAMPLE
    max_text_frame_chars: int = MAX_PROMPT_CHARS + 4096
    max_prompt_chars: int = MAX_PROMPT_CHARS
    idle_s: float = 120.0


class Phase(Enum):
    """Where a call is."""

    AWAITING_START = "awaiting_start"
    LISTENING = "listening"
    CLOSED = "closed"


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


@dataclass(frozen=True)
class AnswerEnded:
    """An answer's stream ended (however it ended)."""


#: What the listener heard that the call acts on: the library's own events.
Heard = SpeechStarted | Transcript | TurnTooLong | RecognitionFailed
CallInput = TextFrame | AudioFrame | Stalled | Heard | AnswerEnded

# --- what to do (actions) ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """Send ``event`` as a JSON text frame."""

    event: CallEvent


@dataclass(frozen=True)
class Listen:
    """Open the listener; the call's settings are ``start``."""

    start: CallStart


@dataclass(frozen=True)
class Feed:
    """Give the listener this audio (whole samples)."""

    pcm: bytes


@dataclass(frozen=True)
class Answer:
    """Answer a turn: ``prompt`` is the caller's words (``spoken``) or typed text."""

    prompt: str
    spoken: bool


@dataclass(frozen=True)
class Interrupt:
    """Barge in on the answer being spoken."""


@dataclass(frozen=True)
class Close:
    """Close the call with this WebSocket code."""

    code: int
    reason: str


CallAction = Send | Listen | Feed | Answer | Interrupt | Close


class CallCore:
    """One call's rules (see the module docstring): :meth:`handle` an input, get the actions.

    Args:
        limits: What the call accepts.
        builder: Stamps the call's events (``t_ms`` since the call began).
    """

    def __init__(self, limits: CallLimits | None = None, builder: CallEventBuilder | None = None) -> None:
        self.limits = limits or CallLimits()
        self.builder = builder or CallEventBuilder()
        self.phase = Phase.AWAITING_START
        self.start: CallStart | None = None
        self.answers = 0  # answers started and not yet ended
        self._carry = b""
        self._quiet_bytes = 0  # audio bytes since the last speech, turn or answer
        self._told_to_start = False
        # The one table of transitions: (phase, input type) -> handler. Anything else does nothing.
        self._table: dict[tuple[Phase, type], Callable[[Any], list[CallAction]]] = {
            (Phase.AWAITING_START, TextFrame): self._text,
            (Phase.AWAITING_START, AudioFrame): self._audio_before_start,
            (Phase.AWAITING_START, Stalled): self._idle,
            (Phase.LISTENING, TextFrame): self._text,
            (Phase.LISTENING, AudioFrame): self._audio,
            (Phase.LISTENING, Stalled): self._idle,
            (Phase.LISTENING, SpeechStarted): self._speech_began,
            (Phase.LISTENING, Transcript): self._words,
            (Phase.LISTENING, TurnTooLong): self._turn_too_long,
            (Phase.LISTENING, RecognitionFailed): self._not_recognized,
            (Phase.LISTENING, AnswerEnded): self._answer_ended,
            (Phase.AWAITING_START, AnswerEnded): self._answer_ended,
            (Phase.CLOSED, AnswerEnded): self._answer_ended,
        }

    @property
    def answering(self) -> bool:
        """Whether an answer is being spoken."""
        return self.answers > 0

    def handle(self, event: CallInput) -> list[CallAction]:
        """What to do about ``event`` (nothing, once the call is closed, but count answers ending)."""
        step = self._table.get((self.phase, type(event)))
        return [] if step is None else step(event)

    # --- frames ---------------------------------------------------------------------------------------

    def _error(self, code: str, message: str) -> Send:
        return Send(self.builder.error(code=code, message=message))

    def _text(self, frame: TextFrame) -> list[CallAction]:
        if len(frame.text) > self.limits.max_text_frame_chars:
            return [
                self._error(
                    "invalid_request",
                    f"text frames hold at most {self.limits.max_text_frame_chars} characters",
                )
            ]
        try:
            message = json.loads(frame.text)
        except (json.JSONDecodeError, RecursionError):
            return [self._error("invalid_json", "a text frame must be one JSON object")]
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "start":
            return self._start(message)
        if self.phase is Phase.AWAITING_START:
            return [self._error("invalid_request", 'send {"type": "start"} first')]
        if kind == "prompt":
            return self._prompt(message)
        if kind == "interrupt":
            return [Interrupt()] if self.answering else []
        return [self._error("invalid_request", "'type' must be 'start', 'prompt' or 'interrupt'")]

    def _start(self, message: dict[str, Any]) -> list[CallAction]:
        if self.phase is not Phase.AWAITING_START:
            return [self._error("invalid_request", "the call has already started")]
        fields = {key: value for key, value in message.items() if key != "type"}
        try:
            start = parse_call_start(fields)
        except PayloadError as error:
            return [self._error("invalid_request", error.message)]
        self.phase, self.start, self._quiet_bytes = Phase.LISTENING, start, 0
        return [Listen(start)]

    def _prompt(self, message: dict[str, Any]) -> list[CallAction]:
        unknown = sorted(str(key) for key in message if key not in ("type", "prompt"))
        if unknown:
            return [self._error("invalid_request", f"a prompt frame holds 'prompt' only, not {unknown}")]
        try:
            prompt = parse_prompt(message.get("prompt"), max_prompt_chars=self.limits.max_prompt_chars)
        except PayloadError as error:
            return [self._error("invalid_request", error.message)]
        return self._answer(prompt, spoken=False)

    def _audio_before_start(self, frame: AudioFrame) -> list[CallAction]:
        self._quiet_bytes += len(frame.data)
        if self._idle_reached():
            return self._idle(Stalled())
        if self._told_to_start:
            return []  # one error is enough: a microphone sends many frames
        self._told_to_start = True
        return [self._error("invalid_request", 'audio before start: send {"type": "start"} first')]

    def _audio(self, frame: AudioFrame) -> list[CallAction]:
        if len(frame.data) > self.limits.max_audio_frame_bytes:
            message = (
                f"audio frames hold at most {self.limits.max_audio_frame_bytes} bytes; this one was dropped"
            )
            return [self._error("invalid_request", message)]
        data = self._carry + frame.data
        whole = len(data) - len(data) % _BYTES_PER_SAMPLE
        self._carry = data[whole:]
        if not self.answering:
            self._quiet_bytes += whole
            if self._idle_reached():
                return self._idle(Stalled())
        return [Feed(data[:whole])] if whole else []

    def _idle_reached(self) -> bool:
        return self._quiet_bytes > self.limits.idle_s * CALL_SAMPLE_RATE * _BYTES_PER_SAMPLE

    def _idle(self, _event: Stalled) -> list[CallAction]:
        self.phase = Phase.CLOSED
        message = f"nothing was said for {self.limits.idle_s:g} s; the call is closed"
        return [self._error("idle_timeout", message), Close(status.WS_1000_NORMAL_CLOSURE, "idle")]

    # --- the listener and the answers -----------------------------------------------------------------

    def _speech_began(self, event: SpeechStarted) -> list[CallAction]:
        self._quiet_bytes = 0
        actions: list[CallAction] = [Send(self.builder.speech_start(at_s=event.at_s))]
        if self.answering:
            actions.append(Interrupt())  # barge-in: the caller speaks over the agent
        return actions

    def _words(self, event: Transcript) -> list[CallAction]:
        self._quiet_bytes = 0
        actions: list[CallAction] = [Send(self.builder.transcript(text=event.text, final=event.final))]
        prompt = event.text.strip()
        if event.final and prompt:
            actions.extend(self._answer(prompt[: self.limits.max_prompt_chars], spoken=True))
        return actions

    def _turn_too_long(self, _event: TurnTooLong) -> list[CallAction]:
        self._quiet_bytes = 0
        return [self._error("turn_too_long", "the caller spoke past the longest turn; that turn was cut")]

    def _not_recognized(self, event: RecognitionFailed) -> list[CallAction]:
        self._quiet_bytes = 0
        message = f"the caller's words were not recognized ({event.code}: {event.message})"
        return [self._error("recognition_failed", message)]

    def _answer(self, prompt: str, *, spoken: bool) -> list[CallAction]:
        self._quiet_bytes = 0
        actions: list[CallAction] = [Interrupt()] if self.answering else []
        self.answers += 1
        actions.append(Answer(prompt, spoken))
        return actions

    def _answer_ended(self, _event: AnswerEnded) -> list[CallAction]:
        self.answers = max(0, self.answers - 1)
        self._quiet_bytes = 0
        return []
