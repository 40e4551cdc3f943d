"""The caller's turns from VAD frame probabilities: a sans-I/O detector (no clock: time is samples).

Each :meth:`TurnDetector.feed` takes one frame's speech probability and returns the events it causes.
The states and every transition are in one table (:data:`_TABLE`): a state's row holds, for each frame
kind, the handler that decides the next state and the events.

- ``idle`` + speech: ``onset`` (speech not yet long enough to count).
- ``onset``: ``min_speech_s`` of speech starts a turn (:class:`SpeechStarted`, at the first speech
  frame); a silent frame before that drops it (a cough).
- ``speaking`` + silence: ``paused`` (:class:`Paused`); once the silence has lasted
  ``speculate_after_s``, :class:`Quiet` (the recognizer may start its final recognition speculatively).
- ``paused`` + speech: ``speaking`` again (:class:`Resumed`); ``end_silence_s`` of silence ends the turn
  (:class:`TurnEnded`).
- in a turn, ``max_turn_s`` of audio ends it (:class:`TurnTooLong`, then :class:`TurnEnded`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from strands_voice.listen._settings import ListenSettings

__all__ = [
    "Paused",
    "Quiet",
    "Resumed",
    "SpeechStarted",
    "TurnDetector",
    "TurnEnded",
    "TurnEvent",
    "TurnTooLong",
]

State = Literal["idle", "onset", "speaking", "paused"]
Kind = Literal["speech", "silence", "unsure"]


@dataclass(frozen=True)
class _AtSample:
    """A moment of the turn: the event happened at sample ``at``."""

    at: int


class SpeechStarted(_AtSample):
    """A turn started: speech began at sample ``at`` (reported once ``min_speech_s`` of it was heard)."""


class Paused(_AtSample):
    """The caller went silent at sample ``at`` (the turn may still go on)."""


class Quiet(_AtSample):
    """The pause has lasted ``speculate_after_s`` at sample ``at``: the turn will likely end (speculate)."""


class Resumed(_AtSample):
    """Speech resumed at sample ``at`` after a pause shorter than ``end_silence_s``."""


@dataclass(frozen=True)
class TurnEnded:
    """The turn ended; its speech ran from sample ``start`` to ``end`` (silence or the length cap after)."""

    start: int
    end: int


class TurnTooLong(_AtSample):
    """The turn reached ``max_turn_s`` at sample ``at``; a :class:`TurnEnded` follows."""


TurnEvent = SpeechStarted | Paused | Quiet | Resumed | TurnEnded | TurnTooLong


class TurnDetector:
    """VAD probabilities in, turn events out (see the module docstring).

    Args:
        settings: Thresholds and durations (converted to samples once).
    """

    def __init__(self, settings: ListenSettings) -> None:
        self._frame = settings.frame_samples
        self._speech_at = settings.vad_threshold
        self._silence_below = settings.vad_threshold - settings.vad_hysteresis
        self._min_speech = settings.samples(settings.min_speech_s)
        self._end_silence = settings.samples(settings.end_silence_s)
        self._quiet_after = settings.samples(settings.speculate_after_s)
        self._quiet_sent = False
        self._max_turn = settings.samples(settings.max_turn_s)
        self.state: State = "idle"
        self.position = 0  # samples seen so far (the end of the current frame after feed)
        self._start = 0  # first speech sample of the onset / turn
        self._last_speech_end = 0  # end of the last speech frame of the turn

    def feed(self, probability: float) -> list[TurnEvent]:
        """One frame's speech probability in; the events it causes out."""
        kind: Kind = (
            "speech"
            if probability >= self._speech_at
            else "silence"
            if probability < self._silence_below
            else "unsure"
        )
        frame_start = self.position
        self.position += self._frame
        events = _TABLE[self.state][_COLUMN[kind]](self, frame_start)
        if self.state in ("speaking", "paused") and self.position - self._start >= self._max_turn:
            events += [TurnTooLong(self.position), TurnEnded(self._start, self._last_speech_end)]
            self.state = "idle"
        return events

    # --- transitions (one per table row group) ---------------------------------------------------------

    def _stay(self, frame_start: int) -> list[TurnEvent]:
        return []

    def _onset(self, frame_start: int) -> list[TurnEvent]:
        self.state, self._start = "onset", frame_start
        return self._onset_grows(frame_start)

    def _onset_grows(self, frame_start: int) -> list[TurnEvent]:
        self._last_speech_end = self.position
        if self.position - self._start >= self._min_speech:
            self.state = "speaking"
            return [SpeechStarted(self._start)]
        return []

    def _onset_drops(self, frame_start: int) -> list[TurnEvent]:
        self.state = "idle"
        return []

    def _speech(self, frame_start: int) -> list[TurnEvent]:
        self._last_speech_end = self.position
        return []

    def _pause(self, frame_start: int) -> list[TurnEvent]:
        self.state = "paused"
        self._quiet_sent = False
        return [Paused(frame_start), *self._quiet()]

    def _quiet(self) -> list[TurnEvent]:
        if not self._quiet_sent and self.position - self._last_speech_end >= self._quiet_after:
            self._quiet_sent = True
            return [Quiet(self.position)]
        return []

    def _resume(self, frame_start: int) -> list[TurnEvent]:
        self.state = "speaking"
        self._last_speech_end = self.position
        return [Resumed(frame_start)]

    def _silence_grows(self, frame_start: int) -> list[TurnEvent]:
        if self.position - self._last_speech_end >= self._end_silence:
            self.state = "idle"
            return [*self._quiet(), TurnEnded(self._start, self._last_speech_end)]
        return self._quiet()


_Transition = Callable[[TurnDetector, int], list[TurnEvent]]

#: The columns of :data:`_TABLE`: a frame's kind.
_COLUMN: Final[dict[Kind, int]] = {"speech": 0, "unsure": 1, "silence": 2}

#: Every transition: state -> the handlers of a (speech, unsure, silence) frame.
_TABLE: Final[dict[State, tuple[_Transition, _Transition, _Transition]]] = {
    "idle": (TurnDetector._onset, TurnDetector._stay, TurnDetector._stay),
    "onset": (TurnDetector._onset_grows, TurnDetector._onset_grows, TurnDetector._onset_drops),
    "speaking": (TurnDetector._speech, TurnDetector._speech, TurnDetector._pause),
    "paused": (TurnDetector._resume, TurnDetector._silence_grows, TurnDetector._silence_grows),
}
