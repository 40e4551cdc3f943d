"""Who speaks when: the turn-taking core of a spoken conversation, sans-I/O.

:class:`TurnTaking` is given what happens (the listener's events, the answer's progress, a typed turn, the
Stop button, time passing) with the time, and answers each with actions (start an answer, hold it, let it
go on, barge in on it, drop it, show the caller's words, report an error). It keeps no clock and does no
I/O: the cascade (:mod:`strands_voice.cascade`) and the example app's spoken call drive the same rules.

The rules, as a person on the phone keeps them:

- A caller's turn is answered once it ends (the listener judges the end: a pause mid-sentence is not
  one). A turn that begins before the answer to the last one is heard drops that answer, and the two are
  answered as one question.
- The caller's first sound over an answer holds it at once (``PauseAnswer``); then: real words (a question,
  "stop", a sentence, or a short utterance the recognizer is sure of) or speech that goes on past
  ``overlap_speech_s`` (longer in a language whose backchannels are) barge in (``InterruptAnswer``: the
  agent keeps what was heard, and the new turn is answered); a backchannel ("uh-huh", "right"), a noise, or
  silence for ``resume_after_silence_s`` let the answer go on (``ResumeAnswer``). Nothing is held past
  ``decide_within_s``.
- A typed turn is answered at once (it barges in on an answer); the Stop button barges in.
- Speculation (``TurnSettings.speculate``): the caller's words at a pause, while no answer is out, that
  look finished ask for an answer at once, held (``StartAnswer(held=True)``): written, nothing of it out.
  The turn's end with the same words releases it (``ReleaseAnswer``, after the final ``ShowTranscript``);
  the caller going on, other words, a typed turn or the Stop button drop it (``DropAnswer``: in silence,
  nothing remembered). A held answer is the answer being asked for: its turn is still the caller's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from strands_voice.listen import (
    CallerPaused,
    CallerResumed,
    OnsetDropped,
    RecognitionFailed,
    SpeechOnset,
    SpeechStarted,
    Transcript,
    TurnEnded,
    TurnTooLong,
)
from strands_voice.turns._actions import (
    DropAnswer,
    InterruptAnswer,
    PauseAnswer,
    ReleaseAnswer,
    ReportError,
    ResumeAnswer,
    ShowSpeechStart,
    ShowTranscript,
    StartAnswer,
    TurnAction,
)
from strands_voice.turns._inputs import AnswerEnded, AnswerSpeaking, StopPressed, Tick, TurnInput, Typed
from strands_voice.turns._overlap import barges_in, long_speech_s, sure_before_the_end
from strands_voice.turns._settings import TurnSettings
from strands_voice.turns._speculation import looks_finished, same_words
from strands_voice.turns._state import Move, Phase, next_phase

__all__ = ["NOT_RECOGNIZED", "TOO_LONG", "TurnTaking"]

#: What the caller is told when a turn's words could not be recognized (the reason is in the log).
NOT_RECOGNIZED: Final = "your words were not recognized; please say that again"
#: What the caller is told when a turn was cut at the longest length.
TOO_LONG: Final = "the caller spoke past the longest turn; that turn was cut"


@dataclass
class _Caller:
    """What the caller is doing, from the listener's events (``now`` of the core's clock)."""

    in_turn: bool = False  # between SpeechStarted and TurnEnded
    sounding: bool = False  # making a sound now (an onset or speech, not a pause)
    silent_since: float = 0.0
    words: str = ""  # a streaming engine's words while the caller speaks (since they last spoke again)


@dataclass
class _Answer:
    """The answer the core asked for last."""

    answer_id: str
    prompt: str
    spoken: bool
    held_at: float | None = None  # when the caller's sound held it
    words: str = ""  # a speculation's words (its prompt may join an earlier turn's)


class TurnTaking:
    """The turn-taking rules of one conversation (see the module docstring).

    Args:
        settings: The thresholds.

    Attributes:
        phase: Where the agent's answer is.
        wakeup: When the core wants a :class:`~strands_voice.turns.Tick` (None: it waits for events).
    """

    def __init__(self, settings: TurnSettings | None = None) -> None:
        self.settings = settings or TurnSettings()
        self.phase = Phase.IDLE
        self.wakeup: float | None = None
        self._answer: _Answer | None = None
        self._answers = 0
        self._caller = _Caller()
        self._unanswered: str | None = None  # a dropped answer's prompt: the next spoken turn joins it

    @property
    def answer_id(self) -> str | None:
        """The answer being asked for, heard or held (None when idle)."""
        return None if self.phase is Phase.IDLE or self._answer is None else self._answer.answer_id

    def handle(self, event: TurnInput, now: float) -> list[TurnAction]:
        """What to do about ``event``, which happened at ``now`` (seconds, any monotonic clock)."""
        actions = _HANDLERS[type(event)](self, event, now)
        self.wakeup = self._next_wakeup()
        return actions

    # --- the answer's moves (the only place the phase changes) ----------------------------------------

    def _move(self, move: Move) -> bool:
        phase = next_phase(self.phase, move)
        if phase is None:
            return False
        self.phase = phase
        return True

    def _ask(self, prompt: str, *, spoken: bool) -> list[TurnAction]:
        """A turn to answer: whatever answer is out is stopped (dropped, or barged in on), then this one."""
        before, answer = self.phase, self._answer
        self._move(Move.ASK)
        actions: list[TurnAction] = []
        if answer is not None and before is Phase.HELD:
            actions.append(DropAnswer(answer.answer_id))  # its words are in this turn's, or not the caller's
        elif answer is not None and before is Phase.PENDING:
            actions.append(DropAnswer(answer.answer_id))
            if spoken and answer.spoken:  # the caller went on before hearing it: one question
                self._unanswered = answer.prompt
        elif answer is not None and before is not Phase.IDLE:
            actions.append(InterruptAnswer(answer.answer_id))
        joined = spoken and self._unanswered is not None
        if joined:
            prompt = f"{self._unanswered} {prompt}"
        self._unanswered = None
        self._answers += 1
        prompt = prompt[: self.settings.max_prompt_chars]
        self._answer = _Answer(f"answer-{self._answers}", prompt, spoken)
        return [*actions, StartAnswer(self._answer.answer_id, prompt, spoken, joined)]

    def _stop(self) -> list[TurnAction]:
        """A barge-in: a heard answer is interrupted, a pending one dropped."""
        before, answer = self.phase, self._answer
        if answer is None or not self._move(Move.STOP):
            return []
        unheard = before in (Phase.PENDING, Phase.HELD)
        return [DropAnswer(answer.answer_id) if unheard else InterruptAnswer(answer.answer_id)]

    def _go_on(self) -> list[TurnAction]:
        if self._answer is None or not self._move(Move.GO_ON):
            return []
        self._answer.held_at = None
        return [ResumeAnswer(self._answer.answer_id)]

    # --- the listener's events ------------------------------------------------------------------------

    def _onset(self, event: SpeechOnset, now: float) -> list[TurnAction]:
        self._caller.sounding = True
        if self._answer is None or not self._move(Move.ONSET):
            return []
        self._answer.held_at = now
        return [PauseAnswer(self._answer.answer_id)]

    def _onset_dropped(self, event: OnsetDropped, now: float) -> list[TurnAction]:
        self._caller.sounding, self._caller.silent_since = False, now
        return [] if self._caller.in_turn else self._go_on()

    def _speech_started(self, event: SpeechStarted, now: float) -> list[TurnAction]:
        self._caller.in_turn = self._caller.sounding = True
        self._caller.words = ""
        actions: list[TurnAction] = [ShowSpeechStart(event.at_s)]
        answer, before = self._answer, self.phase
        if answer is not None and before in (Phase.PENDING, Phase.HELD) and self._move(Move.CALLER_SPEAKS):
            # The caller goes on before hearing the answer: its question joins the next turn (a held
            # one's words are still the caller's own turn's: not asked again).
            if before is Phase.PENDING:
                self._unanswered = answer.prompt if answer.spoken else None
            actions.append(DropAnswer(answer.answer_id))
        return actions

    def _paused(self, event: CallerPaused, now: float) -> list[TurnAction]:
        self._caller.sounding, self._caller.silent_since = False, now
        # A streaming engine's words, heard up to the pause, are the words at it (until newer ones come).
        return self._speculate(self._caller.words) if self._caller.words else []

    def _resumed(self, event: CallerResumed, now: float) -> list[TurnAction]:
        self._caller.sounding, self._caller.words = True, ""
        return self._withdraw()  # the caller goes on: a held answer was not for their turn

    def _turn_ended(self, event: TurnEnded, now: float) -> list[TurnAction]:
        if self._caller.sounding:
            self._caller.silent_since = now
        self._caller.in_turn = self._caller.sounding = False
        self._caller.words = ""
        return []

    def _transcript(self, event: Transcript, now: float) -> list[TurnAction]:
        text = event.text.strip()
        if self.phase in (Phase.SPEAKING, Phase.PAUSED):
            real = barges_in(text, event.confidence, self.settings)
            shown: list[TurnAction] = [ShowTranscript(event.text, event.final, event.end_of_turn, real)]
            if not real:
                return shown + (self._go_on() if event.final else [])
            if event.final:
                return shown + self._ask(text, spoken=True)
            if not sure_before_the_end(text, self.settings):
                return shown  # a short utterance is judged on its final words
            return shown + self._stop() + self._speculate(text)
        shown = [ShowTranscript(event.text, event.final, event.end_of_turn)]
        if not event.final and self._caller.sounding:
            self._caller.words = text
            return shown
        if not event.final:
            return shown + self._withdraw(unless=text) + self._speculate(text)
        if (
            self.phase is Phase.HELD
            and text
            and self._answer is not None
            and same_words(text, self._answer.words, self.settings.language)
        ):
            return shown + self._release()
        if text:
            return shown + self._ask(text, spoken=True)
        return shown + self._withdraw() + self._ask_unanswered()

    # --- speculation: an answer asked for at a pause, held until the turn ends ------------------------

    def _speculate(self, text: str) -> list[TurnAction]:
        """The caller's words at a pause: if they look finished and no answer is out, ask for one, held."""
        caller = self._caller
        if (
            not self.settings.speculate
            or not caller.in_turn
            or caller.sounding
            or not looks_finished(text, self.settings.language)
            or not self._move(Move.SPECULATE)
        ):
            return []
        joined = self._unanswered is not None
        prompt = f"{self._unanswered} {text}" if joined else text
        self._answers += 1
        prompt = prompt[: self.settings.max_prompt_chars]
        self._answer = _Answer(f"answer-{self._answers}", prompt, spoken=True, words=text)
        return [StartAnswer(self._answer.answer_id, prompt, True, joined, held=True)]

    def _release(self) -> list[TurnAction]:
        """The turn ended with the held answer's words: it is this turn's answer (its joined turn too)."""
        assert self._answer is not None
        self._move(Move.RELEASE)
        self._unanswered = None
        return [ReleaseAnswer(self._answer.answer_id)]

    def _withdraw(self, unless: str | None = None) -> list[TurnAction]:
        """Drop a held answer in silence (the caller went on; ``unless`` its words are still these)."""
        answer = self._answer
        if self.phase is not Phase.HELD or answer is None:
            return []
        if unless is not None and same_words(unless, answer.words, self.settings.language):
            return []
        self._move(Move.WITHDRAW)
        return [DropAnswer(answer.answer_id)]

    def _ask_unanswered(self) -> list[TurnAction]:
        """The turn that dropped an answer had no words (a noise): the dropped question is answered."""
        prompt, self._unanswered = self._unanswered, None
        return [] if prompt is None else self._ask(prompt, spoken=True)

    def _too_long(self, event: TurnTooLong, now: float) -> list[TurnAction]:
        return [ReportError("turn_too_long", TOO_LONG)]

    def _not_recognized(self, event: RecognitionFailed, now: float) -> list[TurnAction]:
        return [
            ReportError("recognition_failed", NOT_RECOGNIZED),
            *self._withdraw(),
            *self._go_on(),
            *self._ask_unanswered(),
        ]

    # --- the answer, the caller's keys, the clock -----------------------------------------------------

    def _speaking(self, event: AnswerSpeaking, now: float) -> list[TurnAction]:
        if self._answer is not None and event.answer_id == self._answer.answer_id:
            self._move(Move.HEARD)
        return []

    def _ended(self, event: AnswerEnded, now: float) -> list[TurnAction]:
        if self._answer is not None and event.answer_id == self._answer.answer_id:
            self._move(Move.ENDED)
        return []

    def _typed(self, event: Typed, now: float) -> list[TurnAction]:
        self._unanswered = None  # a typed turn is its own question
        return self._ask(event.text, spoken=False)

    def _stop_pressed(self, event: StopPressed, now: float) -> list[TurnAction]:
        return self._stop()

    def _tick(self, event: Tick, now: float) -> list[TurnAction]:
        held_at = self._answer.held_at if self._answer is not None else None
        if self.phase is not Phase.PAUSED or held_at is None:
            return []
        caller, settings = self._caller, self.settings
        # The same sums as _next_wakeup: a tick at its wakeup is on time.
        if caller.sounding and caller.in_turn and now >= held_at + long_speech_s(settings):
            return self._stop()  # no backchannel goes on this long
        if not caller.sounding and now >= caller.silent_since + settings.resume_after_silence_s:
            return self._go_on()
        if now >= held_at + settings.decide_within_s:
            return self._stop() if caller.sounding else self._go_on()
        return []

    def _next_wakeup(self) -> float | None:
        held_at = self._answer.held_at if self._answer is not None else None
        if self.phase is not Phase.PAUSED or held_at is None:
            return None
        settings = self.settings
        due = [held_at + settings.decide_within_s]  # every due time here is one _tick acts on
        if self._caller.sounding and self._caller.in_turn:
            due.append(held_at + long_speech_s(settings))
        elif not self._caller.sounding:
            due.append(self._caller.silent_since + settings.resume_after_silence_s)
        return min(due)


_Handler = Callable[[TurnTaking, Any, float], list[TurnAction]]

#: Which handler takes each input (one per type; the phase table decides what each may change).
_HANDLERS: Final[dict[type, _Handler]] = {
    SpeechOnset: TurnTaking._onset,
    OnsetDropped: TurnTaking._onset_dropped,
    SpeechStarted: TurnTaking._speech_started,
    CallerPaused: TurnTaking._paused,
    CallerResumed: TurnTaking._resumed,
    TurnEnded: TurnTaking._turn_ended,
    Transcript: TurnTaking._transcript,
    TurnTooLong: TurnTaking._too_long,
    RecognitionFailed: TurnTaking._not_recognized,
    AnswerSpeaking: TurnTaking._speaking,
    AnswerEnded: TurnTaking._ended,
    Typed: TurnTaking._typed,
    StopPressed: TurnTaking._stop_pressed,
    Tick: TurnTaking._tick,
}
