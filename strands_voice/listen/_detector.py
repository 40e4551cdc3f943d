"""The caller's turns from VAD frame probabilities: a sans-I/O detector (no clock: time is samples fed).

Each :meth:`TurnDetector.feed` takes one frame's speech probability and returns what it causes: the
listener's own events (:mod:`strands_voice.listen._events`, emitted here, never read from the state) and
:class:`JudgeTurn`, the listener's cue to judge a pause. :meth:`TurnDetector.judged` takes the verdict.

The states and every transition are in one table (:data:`TRANSITIONS`, state x input -> state, the
session core's style); the events a move emits depend on the move alone:

- idle + speech -> onset (:class:`SpeechOnset`); onset + silence -> idle (:class:`OnsetDropped`: shorter
  than ``min_speech_s``, a cough); onset + ``min_speech_s`` of it -> speaking (:class:`SpeechStarted`, at
  its first frame);
- speaking + silence -> paused (:class:`CallerPaused`); paused + speech -> speaking (:class:`CallerResumed`);
  a frame between the thresholds keeps the state, but no silence timer counts it as silence;
- after ``speculate_after_s`` of a pause, :class:`JudgeTurn` (once per pause): the listener starts the
  speculative recognition and, with ``end_of_turn="model"``, the turn-end model; a complete verdict ends
  the turn now (:class:`TurnEnded` by ``model``), another may name the silence that ends it (``wait_s``:
  the words end a sentence but the sound is unsure), which ends it by ``model`` once the pause lasts that
  long;
- the silence timer ends a paused turn (by ``silence``): ``end_silence_s`` without the model,
  ``incomplete_silence_s`` while the model has not judged it complete;
- ``max_turn_s`` of a turn ends it (:class:`TurnTooLong`, then :class:`TurnEnded` by ``max_turn``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from strands_voice.listen._events import (
    CallerPaused,
    CallerResumed,
    EndedBy,
    EndOfTurn,
    ListenEvent,
    OnsetDropped,
    SpeechOnset,
    SpeechStarted,
    TurnEnded,
    TurnTooLong,
)
from strands_voice.listen._settings import ListenSettings

__all__ = ["TRANSITIONS", "Detected", "JudgeTurn", "SpeechInput", "SpeechState", "TurnDetector"]


class SpeechState(enum.Enum):
    """Where the caller is."""

    IDLE = "idle"
    ONSET = "onset"  # speech shorter than min_speech_s so far
    SPEAKING = "speaking"
    PAUSED = "paused"  # in a turn, silent


class SpeechInput(enum.Enum):
    """What moves the detector."""

    SPEECH = "speech"  # a frame at or above the threshold
    UNSURE = "unsure"  # a frame between the thresholds (keeps the state)
    SILENCE = "silence"  # a frame below threshold - hysteresis
    LONG_ENOUGH = "long enough"  # the onset reached min_speech_s
    OVER = "over"  # the turn ends (a verdict, the silence timer or the length cap)


_S, _I = SpeechState, SpeechInput

#: Every transition; an input a state has no row for leaves it where it is.
TRANSITIONS: Final[dict[tuple[SpeechState, SpeechInput], SpeechState]] = {
    (_S.IDLE, _I.SPEECH): _S.ONSET,
    (_S.ONSET, _I.SILENCE): _S.IDLE,
    (_S.ONSET, _I.LONG_ENOUGH): _S.SPEAKING,
    (_S.SPEAKING, _I.SILENCE): _S.PAUSED,
    (_S.PAUSED, _I.SPEECH): _S.SPEAKING,
    (_S.SPEAKING, _I.OVER): _S.IDLE,
    (_S.PAUSED, _I.OVER): _S.IDLE,
}


@dataclass(frozen=True)
class JudgeTurn:
    """Judge pause ``pause`` now: the turn's audio so far is what the verdict is about."""

    pause: int


Detected = ListenEvent | JudgeTurn


class TurnDetector:
    """VAD probabilities in, turn events out (see the module docstring).

    Args:
        settings: Thresholds and durations (converted to samples once).
        judged_by_model: Whether a turn-end model will answer :class:`JudgeTurn` (else the silence timer
            alone ends turns).
    """

    def __init__(self, settings: ListenSettings, *, judged_by_model: bool = False) -> None:
        self._rate = settings.sample_rate
        self._frame = settings.frame_samples
        self._speech_at = settings.vad_threshold
        self._silence_below = settings.vad_threshold - settings.vad_hysteresis
        self._min_speech = settings.samples(settings.min_speech_s)
        self._judge_after = settings.samples(settings.speculate_after_s)
        self._max_turn = settings.samples(settings.max_turn_s)
        self.judged_by_model = judged_by_model
        self._silence_limit = settings.samples(
            settings.incomplete_silence_s if judged_by_model else settings.end_silence_s
        )
        self.state = SpeechState.IDLE
        self.position = 0  # samples seen so far (the end of the current frame after feed)
        self._start = 0  # first speech sample of the onset / turn
        self._last_speech_end = 0  # end of the last speech frame of the turn
        self.pause = 0  # the current pause's number (a verdict for an older one is stale)
        self._judging = False  # JudgeTurn sent for the current pause
        self._p: float | None = None  # the model's probability for the current pause
        self._verdict_limit: int | None = None  # the silence the current pause's verdict ends the turn at

    @property
    def last_speech_end(self) -> int:
        """The end of the turn's last frame that was not silence, in samples (a pause's silence counts from
        here; a frame the VAD is unsure of moves it)."""
        return self._last_speech_end

    def _seconds(self, samples: int) -> float:
        return samples / self._rate

    def feed(self, probability: float) -> list[Detected]:
        """One frame's speech probability in; what it causes out."""
        kind = (
            SpeechInput.SPEECH
            if probability >= self._speech_at
            else SpeechInput.SILENCE
            if probability < self._silence_below
            else SpeechInput.UNSURE
        )
        frame_start = self.position
        self.position += self._frame
        # A frame the VAD is unsure of is not silence: in a pause it holds the silence timer back (the
        # caller's last, quieter words are often such frames; ending the turn on them would cut them off).
        if kind is not SpeechInput.SILENCE and self.state is not SpeechState.IDLE:
            self._last_speech_end = self.position
        out = self._move(kind, frame_start)
        if self.state is SpeechState.ONSET and self.position - self._start >= self._min_speech:
            out += self._move(SpeechInput.LONG_ENOUGH, frame_start)
        if (
            self.state in (SpeechState.SPEAKING, SpeechState.PAUSED)
            and self.position - self._start >= self._max_turn
        ):
            return [*out, TurnTooLong(self._seconds(self.position)), *self._end("max_turn", self.position)]
        if self.state is SpeechState.PAUSED:
            out += self._pause_goes_on()
        return out

    def judged(
        self, pause: int, complete: bool, p: float | None, wait_s: float | None = None
    ) -> list[Detected]:
        """The verdict on pause ``pause`` (stale once the caller spoke again): ``wait_s``, if given, is the
        silence that ends the turn (now, if the pause already lasted that long); a complete verdict
        without it ends the turn now."""
        if self.state is not SpeechState.PAUSED or pause != self.pause:
            return []  # the caller spoke again, or the turn already ended: stale
        self._p = p
        if complete and wait_s is None:
            return self._end("model", self._last_speech_end)
        if wait_s is not None:
            self._verdict_limit = round(wait_s * self._rate)
            if self.position - self._last_speech_end >= self._verdict_limit:
                return self._end("model", self._last_speech_end)
        return []

    # --- moves ----------------------------------------------------------------------------------------

    def _move(self, event: SpeechInput, frame_start: int) -> list[Detected]:
        before = self.state
        after = TRANSITIONS.get((before, event), before)
        if after is before:
            return []
        self.state = after
        if after is SpeechState.ONSET:
            self._start = frame_start
            self._last_speech_end = self.position
            return [SpeechOnset(self._seconds(frame_start))]
        if before is SpeechState.ONSET:
            if after is SpeechState.IDLE:
                return [OnsetDropped(self._seconds(frame_start))]
            return [SpeechStarted(self._seconds(self._start))]
        if after is SpeechState.PAUSED:
            self.pause += 1
            self._judging, self._p, self._verdict_limit = False, None, None
            return [CallerPaused(self._seconds(frame_start))]
        if after is SpeechState.SPEAKING:
            return [CallerResumed(self._seconds(frame_start))]
        return []  # -> IDLE by OVER: _end emits the TurnEnded

    def _pause_goes_on(self) -> list[Detected]:
        silence = self.position - self._last_speech_end
        out: list[Detected] = []
        if not self._judging and silence >= self._judge_after:
            self._judging = True
            out.append(JudgeTurn(self.pause))
        if self._verdict_limit is not None and silence >= self._verdict_limit:
            out += self._end("model", self._last_speech_end)
        elif silence >= self._silence_limit:
            out += self._end("silence", self._last_speech_end)
        return out

    def _end(self, by: EndedBy, speech_end: int) -> list[Detected]:
        start, p = self._start, self._p
        self._move(SpeechInput.OVER, self.position)
        end_of_turn = EndOfTurn(by, p if by == "model" or self.judged_by_model else None)
        return [
            TurnEnded(
                self._seconds(start), self._seconds(speech_end), self._seconds(self.position), end_of_turn
            )
        ]
