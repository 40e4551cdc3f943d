"""The turn-taking core driven by events alone: no sockets, no clock (the time is passed in)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from strands_voice.listen import (
    CallerPaused,
    CallerResumed,
    EndOfTurn,
    OnsetDropped,
    RecognitionFailed,
    SpeechOnset,
    SpeechStarted,
    Transcript,
    TurnEnded,
)
from strands_voice.turns import (
    AnswerEnded,
    AnswerSpeaking,
    DropAnswer,
    InterruptAnswer,
    PauseAnswer,
    Phase,
    ReportError,
    ResumeAnswer,
    ShowSpeechStart,
    ShowTranscript,
    StartAnswer,
    StopPressed,
    Tick,
    TurnAction,
    TurnInput,
    TurnSettings,
    TurnTaking,
    Typed,
    barges_in,
)

BY_MODEL = EndOfTurn("model", 0.93)


def drive(core: TurnTaking, steps: Iterable[tuple[float, TurnInput]]) -> list[TurnAction]:
    """Every action of every step, in order."""
    return [action for now, event in steps for action in core.handle(event, now)]


def said(
    start: float, text: str, *, end: float, confidence: float | None = 0.9
) -> list[tuple[float, TurnInput]]:
    """A whole turn as the listener reports it: onset, start, pause, end, final words."""
    return [
        (start, SpeechOnset(start)),
        (start + 0.2, SpeechStarted(start)),
        (end, CallerPaused(end)),
        (end + 0.25, TurnEnded(start, end, end + 0.25, BY_MODEL)),
        (end + 0.26, Transcript(text, final=True, confidence=confidence, end_of_turn=BY_MODEL)),
    ]


def speaking_core() -> TurnTaking:
    """A core whose first answer is being heard."""
    core = TurnTaking()
    drive(core, [*said(0.0, "What does the premium plan cost?", end=1.5), (3.0, AnswerSpeaking("answer-1"))])
    assert core.phase is Phase.SPEAKING
    return core


def of_type[T](actions: list[TurnAction], kind: type[T]) -> list[T]:
    return [action for action in actions if isinstance(action, kind)]


def test_a_turn_is_answered_once_it_ends_with_its_words_shown() -> None:
    core = TurnTaking()
    actions = drive(core, said(0.0, "What does the premium plan cost?", end=1.5))
    assert actions == [
        ShowSpeechStart(0.0),
        ShowTranscript("What does the premium plan cost?", True, BY_MODEL),
        StartAnswer("answer-1", "What does the premium plan cost?", spoken=True),
    ]
    assert core.phase is Phase.PENDING and core.wakeup is None


def test_a_backchannel_over_an_answer_holds_it_then_lets_it_go_on() -> None:
    core = speaking_core()
    actions = drive(core, said(10.0, "Uh-huh.", end=10.5, confidence=0.4))
    assert of_type(actions, PauseAnswer) == [PauseAnswer("answer-1")]
    assert of_type(actions, ResumeAnswer) == [ResumeAnswer("answer-1")]
    assert not of_type(actions, InterruptAnswer) and not of_type(actions, StartAnswer)
    assert actions.index(PauseAnswer("answer-1")) == 0  # at the caller's first sound
    assert core.phase is Phase.SPEAKING


@pytest.mark.parametrize("text", ["Mm-hmm.", "Right.", "Yeah.", "Okay.", "", "Right hand."])
def test_backchannels_noises_and_mumbles_do_not_stop_the_answer(text: str) -> None:
    core = speaking_core()
    actions = drive(core, said(10.0, text, end=10.4, confidence=0.55))
    assert of_type(actions, ResumeAnswer) and not of_type(actions, InterruptAnswer)


def test_a_cough_shorter_than_a_turn_resumes_at_once() -> None:
    core = speaking_core()
    assert drive(core, [(10.0, SpeechOnset(10.0)), (10.1, OnsetDropped(10.0))]) == [
        PauseAnswer("answer-1"),
        ResumeAnswer("answer-1"),
    ]


def test_real_words_over_an_answer_barge_in_and_are_answered() -> None:
    core = speaking_core()
    actions = drive(core, said(10.0, "Stop. How much is it?", end=11.0))
    assert of_type(actions, InterruptAnswer) == [InterruptAnswer("answer-1")]
    assert of_type(actions, StartAnswer) == [StartAnswer("answer-2", "Stop. How much is it?", spoken=True)]
    assert core.phase is Phase.PENDING


def test_a_short_stop_barges_in_as_soon_as_its_words_are_known() -> None:
    core = speaking_core()
    actions = drive(
        core,
        [
            (10.0, SpeechOnset(10.0)),
            (10.2, SpeechStarted(10.0)),
            (10.45, CallerPaused(10.45)),
            (10.7, Transcript("Stop.", final=False, confidence=0.75)),
        ],
    )
    # The barge-in first; then its words, which look finished, are asked for at once, held.
    assert actions[-2:] == [
        InterruptAnswer("answer-1"),
        StartAnswer("answer-2", "Stop.", spoken=True, held=True),
    ]
    assert core.phase is Phase.HELD


@pytest.mark.parametrize(
    ("language", "early", "final"),
    [("en", "Yeah I", "Yeah, I see."), ("j", "そうです", "そうですね。")],
)
def test_a_backchannel_heard_before_its_end_does_not_barge_in(language: str, early: str, final: str) -> None:
    core = TurnTaking(TurnSettings(language=language))
    drive(core, [*said(0.0, "What does it cost?", end=1.5), (3.0, AnswerSpeaking("answer-1"))])
    actions = drive(
        core,
        [
            (10.0, SpeechOnset(10.0)),
            (10.2, SpeechStarted(10.0)),
            (10.45, CallerPaused(10.45)),
            # Its first words at an inner pause, sure ones, are no backchannel yet: the answer stays held.
            (10.6, Transcript(early, final=False, confidence=0.95)),
        ],
    )
    assert actions[0] == PauseAnswer("answer-1") and not of_type(actions, InterruptAnswer)
    assert core.phase is Phase.PAUSED
    actions = drive(
        core,
        [
            (10.7, CallerResumed(10.7)),
            (10.9, TurnEnded(10.0, 10.9, 11.0, BY_MODEL)),
            (11.0, Transcript(final, final=True)),
        ],
    )
    assert of_type(actions, ResumeAnswer) == [ResumeAnswer("answer-1")] and core.phase is Phase.SPEAKING


def test_a_japanese_aizuchi_may_run_longer_before_speech_barges_in() -> None:
    # 「そうですね」「なるほどですね」 last 0.8-1.1 s said by the endpoint's voices; "uh-huh" half that.
    core = TurnTaking()
    core.settings = TurnSettings(language="j")  # as a call sets it once its start names the language
    drive(core, [*said(0.0, "料金はいくらですか？", end=1.5), (3.0, AnswerSpeaking("answer-1"))])
    drive(core, [(10.0, SpeechOnset(10.0)), (10.2, SpeechStarted(10.0))])
    assert core.wakeup == pytest.approx(11.3)  # turn_words.json: the longest Japanese backchannel
    assert core.handle(Tick(), 10.8) == [] and core.handle(Tick(), 11.1) == []
    assert core.handle(Tick(), 11.3) == [InterruptAnswer("answer-1")]


def test_speech_that_goes_on_barges_in_before_its_words_are_known() -> None:
    core = speaking_core()
    drive(core, [(10.0, SpeechOnset(10.0)), (10.2, SpeechStarted(10.0))])
    assert core.wakeup == pytest.approx(10.8)  # overlap_speech_s after the first sound
    assert core.handle(Tick(), 10.79) == []
    assert core.handle(Tick(), 10.8) == [InterruptAnswer("answer-1")]
    actions = drive(
        core,
        [
            (11.9, CallerPaused(11.9)),
            (12.2, TurnEnded(10.0, 11.9, 12.2, BY_MODEL)),
            (12.2, Transcript("Stop please. What does it cost?", final=True, confidence=0.8)),
        ],
    )
    assert of_type(actions, StartAnswer) == [StartAnswer("answer-2", "Stop please. What does it cost?", True)]
    assert not of_type(actions, InterruptAnswer)  # barged in once


def test_silence_without_words_lets_the_answer_go_on() -> None:
    core = speaking_core()
    drive(core, [(10.0, SpeechOnset(10.0)), (10.2, SpeechStarted(10.0)), (10.3, CallerPaused(10.3))])
    assert core.wakeup == pytest.approx(10.9)  # resume_after_silence_s of silence
    assert core.handle(Tick(), 10.9) == [ResumeAnswer("answer-1")]
    # Its words come later and are real: the answer is stopped then.
    actions = core.handle(Transcript("Can you hear me?", final=True, confidence=0.9), 11.5)
    assert of_type(actions, InterruptAnswer) == [InterruptAnswer("answer-1")]


def test_a_hold_never_outlasts_decide_within() -> None:
    core = TurnTaking(TurnSettings(overlap_speech_s=5.0, resume_after_silence_s=5.0, decide_within_s=1.0))
    drive(core, [*said(0.0, "Hi?", end=0.5), (1.0, AnswerSpeaking("answer-1"))])
    drive(core, [(10.0, SpeechOnset(10.0)), (10.2, SpeechStarted(10.0)), (10.4, CallerPaused(10.4))])
    assert core.handle(Tick(), 11.0) == [ResumeAnswer("answer-1")]
    drive(core, [(20.0, SpeechOnset(20.0)), (20.2, CallerResumed(20.0))])
    assert core.handle(Tick(), 21.0) == [InterruptAnswer("answer-1")]


def test_a_caller_who_goes_on_before_the_answer_is_heard_is_answered_once_for_both_parts() -> None:
    core = TurnTaking()
    first = drive(core, said(0.0, "I would like to know,", end=1.0))
    assert of_type(first, StartAnswer) == [StartAnswer("answer-1", "I would like to know,", True)]
    actions = drive(core, said(2.0, "what the premium plan includes.", end=3.5))
    assert of_type(actions, DropAnswer) == [DropAnswer("answer-1")]
    assert of_type(actions, StartAnswer) == [
        StartAnswer("answer-2", "I would like to know, what the premium plan includes.", True, joined=True)
    ]
    assert core.handle(AnswerEnded("answer-1"), 3.9) == [] and core.phase is Phase.PENDING


def test_a_noise_that_dropped_a_pending_answer_gives_the_question_back() -> None:
    core = TurnTaking()
    drive(core, said(0.0, "What time is it?", end=1.0))
    actions = drive(core, said(2.0, "", end=2.3))
    assert of_type(actions, StartAnswer) == [StartAnswer("answer-2", "What time is it?", True, joined=False)]


def test_typed_turns_and_the_stop_button() -> None:
    core = speaking_core()
    assert core.handle(Typed("Tell me more."), 5.0) == [
        InterruptAnswer("answer-1"),
        StartAnswer("answer-2", "Tell me more.", spoken=False),
    ]
    assert core.handle(StopPressed(), 5.1) == [DropAnswer("answer-2")]
    assert core.handle(StopPressed(), 5.2) == [] and core.phase is Phase.IDLE


def test_errors_are_reported_and_an_unrecognized_overlap_goes_on() -> None:
    core = speaking_core()
    drive(core, [(10.0, SpeechOnset(10.0)), (10.2, SpeechStarted(10.0))])
    actions = core.handle(RecognitionFailed("internal", "boom", True), 10.9)
    assert of_type(actions, ReportError)[0].code == "recognition_failed"
    assert "boom" not in of_type(actions, ReportError)[0].message  # the detail is in the log only
    assert ResumeAnswer("answer-1") in actions


def test_an_answer_that_ended_is_forgotten_and_late_events_do_nothing() -> None:
    core = speaking_core()
    assert core.handle(AnswerEnded("answer-0"), 9.0) == []
    assert core.handle(AnswerEnded("answer-1"), 9.1) == [] and core.phase is Phase.IDLE
    assert core.handle(SpeechOnset(10.0), 10.0) == []  # nothing to hold
    assert core.handle(Tick(), 12.0) == []


@pytest.mark.parametrize(
    ("text", "confidence", "stops"),
    [
        ("Uh-huh.", 0.9, False),
        ("Okay. Okay.", 0.9, False),
        ("", None, False),
        ("Stop.", 0.5, True),
        ("Wait.", 0.3, True),
        ("What?", 0.3, True),
        ("Tell me about the price", 0.4, True),
        ("God is.", 0.67, False),
        ("Hello there.", 0.9, True),
    ],
)
def test_what_words_over_an_answer_mean(text: str, confidence: float | None, stops: bool) -> None:
    assert barges_in(text, confidence, TurnSettings()) is stops


def test_a_turn_whose_words_come_after_the_next_turn_began_still_joins_it() -> None:
    """The listener's final can come after the next turn's start (its recognition ran late): the second
    final then drops the first answer, and the two are one question."""
    core = TurnTaking()
    drive(
        core, [(0.0, SpeechOnset(0.0)), (0.2, SpeechStarted(0.0)), (1.0, TurnEnded(0.0, 1.0, 1.0, BY_MODEL))]
    )
    drive(core, [(1.1, SpeechOnset(1.1)), (1.3, SpeechStarted(1.1))])
    first = core.handle(Transcript("a very long turn", final=True), 1.4)
    assert of_type(first, StartAnswer) == [StartAnswer("answer-1", "a very long turn", True)]
    second = drive(
        core, [(2.0, TurnEnded(1.1, 2.0, 2.0, BY_MODEL)), (2.1, Transcript("the rest", final=True))]
    )
    assert of_type(second, DropAnswer) == [DropAnswer("answer-1")]
    assert of_type(second, StartAnswer) == [StartAnswer("answer-2", "a very long turn the rest", True, True)]
