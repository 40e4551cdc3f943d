"""A spoken call's ears: the library's listener, and a turn's times.

The app is a user of the library's listening pipeline (:mod:`strands_voice.listen`: Silero VAD, the
turn-end model, Whisper), not a second one. :func:`default_listener_factory` opens a
:class:`~strands_voice.listen.Listener` per call, all calls sharing one loaded Whisper model (a
recognition at a time: two at once would both be slow on a small CPU) and one turn-end model; each call's
VAD session is made off the loop. :class:`TurnClock` keeps where the caller's audio was when it arrived,
so a turn's voice-to-voice time runs from the end of the caller's speech (in the audio) to the first
answer audio sent, and its recognition time from the end of the turn to the final text.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

from strands_voice_protocol.call_events import CALL_SAMPLE_RATE

from strands_voice.listen import EndOfTurn

from ..config import RecognizerChoice
from ..payload import CallStart

__all__ = [
    "CallListener",
    "ListenerFactory",
    "TurnClock",
    "TurnTiming",
    "default_listener_factory",
]

_BYTES_PER_SECOND: Final = CALL_SAMPLE_RATE * 2
#: Arrival times kept (one per fed frame: minutes of 20 ms frames).
_KEPT_ARRIVALS: Final = 8192


class CallListener(Protocol):
    """What a call needs of its listener (:class:`strands_voice.listen.Listener` is one).

    Attributes:
        agent_speaking: Set while the call's answer is heard (the caller's turns then are heard with the
            backchannels as context).
    """

    agent_speaking: bool

    async def feed(self, pcm16: bytes) -> None:
        """The caller's audio in (PCM16 mono at 16 kHz, any length)."""

    def events(self) -> AsyncIterator[Any]:
        """What was heard, in order, until :meth:`aclose`."""

    async def aclose(self) -> None:
        """Stop listening (events() ends)."""


#: Opens a call's listener from its ``start`` (may load models: awaited off the call's receive loop).
ListenerFactory = Callable[[CallStart], Awaitable[CallListener]]


def default_listener_factory(choice: RecognizerChoice | None = None) -> ListenerFactory:
    """The library's listener per call, with one recognizer shared by all calls (made at first use).

    Args:
        choice: Whisper (the default: offline, its model loaded once) or Amazon Transcribe streaming; each
            call is heard in its ``listen_lang`` unless the choice names a language.

    Raises (when a call starts):
        MissingDependencyError: The ``listen`` extra is not installed (``strands-voice[listen]``).
    """
    shared: dict[str, Any] = {}
    choice = choice or RecognizerChoice()

    async def open_listener(start: CallStart) -> CallListener:
        from strands_voice.listen import Listener, ListenSettings, SileroVad, default_turn_model

        recognizer = shared.get("recognizer")
        if recognizer is None:
            recognizer = shared["recognizer"] = _recognizer(choice)
            await recognizer.warm_up()  # the first recognition is the slowest: not on the caller's turn
            shared["turn_model"] = await asyncio.to_thread(default_turn_model)
        vad = await asyncio.to_thread(SileroVad)  # an ONNX session per call: made off the loop
        settings = ListenSettings(sample_rate=CALL_SAMPLE_RATE, language=start.listen_lang)
        # The call's language, on the one loaded model (Whisper) or the same service settings (Transcribe).
        heard = recognizer.hearing(choice.language or start.listen_lang)
        return Listener(settings, vad=vad, recognizer=heard, turn_model=shared["turn_model"])

    return open_listener


def _recognizer(choice: RecognizerChoice) -> Any:
    from strands_voice.listen import TranscribeRecognizer, WhisperRecognizer

    if choice.kind == "transcribe":
        return TranscribeRecognizer(language_code=choice.language or "en-US", sample_rate=CALL_SAMPLE_RATE)
    return WhisperRecognizer()


@dataclass(frozen=True)
class TurnTiming:
    """Where a spoken turn's times stand (``time.monotonic`` seconds; None: not seen).

    Attributes:
        speech_end: When the audio of the end of the caller's speech arrived.
        recognition_s: From the end of the turn (its silence heard) to the final text.
        end_of_turn: Why the turn ended (the turn-end model's verdict, the silence timer, the length cap).
    """

    speech_end: float | None
    recognition_s: float | None
    end_of_turn: EndOfTurn | None = None


class TurnClock:
    """When the caller's audio arrived, and the times of the turn being heard.

    Args:
        clock: ``time.monotonic`` (tests may pass their own).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._audio_s = 0.0
        self._arrivals: collections.deque[tuple[float, float]] = collections.deque(maxlen=_KEPT_ARRIVALS)
        self._speech_end: float | None = None
        self._turn_ended: float | None = None
        self._recognized: float | None = None
        self._end_of_turn: EndOfTurn | None = None

    def fed(self, pcm_bytes: int) -> None:
        """``pcm_bytes`` of the caller's audio arrived now."""
        self._audio_s += pcm_bytes / _BYTES_PER_SECOND
        self._arrivals.append((self._audio_s, self._clock()))

    def arrival(self, audio_s: float) -> float | None:
        """When the audio at ``audio_s`` (seconds into the call) arrived (None: no longer known)."""
        for end_s, at in self._arrivals:
            if end_s >= audio_s:
                return at
        return None

    def turn_ended(self, speech_end_s: float) -> None:
        """The listener found the end of a turn whose speech ended at ``speech_end_s``."""
        self._speech_end = self.arrival(speech_end_s)
        self._turn_ended = self._clock()

    def recognized(self, end_of_turn: EndOfTurn | None) -> None:
        """The turn's final text came (with why the turn ended)."""
        self._recognized = self._clock()
        self._end_of_turn = end_of_turn

    def take_turn(self) -> TurnTiming:
        """The times of the turn just heard (and forget them)."""
        recognition = None
        if self._turn_ended is not None and self._recognized is not None:
            recognition = self._recognized - self._turn_ended
        timing = TurnTiming(self._speech_end, recognition, self._end_of_turn)
        self._speech_end = self._turn_ended = self._recognized = None
        self._end_of_turn = None
        return timing

    def now(self) -> float:
        """The clock's time."""
        return self._clock()
