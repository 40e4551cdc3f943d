"""Speculation in the turn-taking core, driven by events alone: an answer asked for at a pause whose words
look finished, held until the turn ends with those words, dropped in silence when the caller goes on."""

from __future__ import annotations

from strands_voice.listen import (
    CallerPaused,
    CallerResumed,
    EndOfTurn,
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
    Phase,
    ReleaseAnswer,
    ReportError,
    ShowTranscript,
    StartAnswer,
    StopPressed,
    TurnAction,
    TurnInput,
    TurnSettings,
    TurnTaking,
    Typed,
)

BY_MODEL = EndOfTurn("model", 0.9)
BY_SILENCE = EndOfTurn("silence", 0.2)
ONE = "Please tell me the long version."
BOTH = "Please tell me the long version. What does the Premium plan include?"


def drive(core: TurnTaking, steps: list[tuple[float, TurnInput]]) -> list[TurnAction]:
    return [action for now, event in steps for action in core.handle(event, now)]


def paused(start: float, words: str, at: float) -> list[tuple[float, TurnInput]]:
    """A turn's start, a pause, and the words recognized at it."""
    return [
        (start, SpeechOnset(start)),
        (start + 0.2, SpeechStarted(start)),
        (at, CallerPaused(at)),
        (at + 0.2, Transcript(words, final=False, confidence=0.9)),
    ]


def ends(start: float, at: float, words: str, by: EndOfTurn = BY_MODEL) -> list[tuple[float, TurnInput]]:
    return [
        (at + 0.3, TurnEnded(start, at, at + 0.3, by)),
        (at + 0.31, Transcript(words, final=True, confidence=0.9, end_of_turn=by)),
    ]


def test_finished_words_at_a_pause_are_asked_for_held_then_released_after_the_final() -> None:
    core = TurnTaking()
    held = drive(core, paused(0.0, "What does it cost?", 1.5))
    assert held[-1] == StartAnswer("answer-1", "What does it cost?", spoken=True, held=True)
    assert core.phase is Phase.HELD and core.answer_id == "answer-1"
    released = drive(core, ends(0.0, 1.5, "What does it cost?"))
    # The final transcript first, then the held answer goes out: nothing of it before the caller's end.
    assert released == [
        ShowTranscript("What does it cost?", True, BY_MODEL),
        ReleaseAnswer("answer-1"),
    ]
    assert core.phase is Phase.PENDING
    drive(core, [(2.5, AnswerSpeaking("answer-1"))])
    assert core.phase is Phase.SPEAKING


def test_the_same_words_in_another_case_or_punctuation_still_release() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "what does it cost", 1.5))
    assert drive(core, ends(0.0, 1.5, "What does it cost?"))[-1] == ReleaseAnswer("answer-1")


def test_a_caller_who_goes_on_drops_it_in_silence_and_one_answer_follows_for_both_sentences() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, ONE, 1.5))
    went_on = drive(core, [(1.9, CallerResumed(1.9))])
    assert went_on == [DropAnswer("answer-1")] and core.phase is Phase.IDLE
    again = drive(core, [(3.5, CallerPaused(3.5)), (3.7, Transcript(BOTH, final=False, confidence=0.9))])
    # The held answer's words were this turn's own: the new one is not "joined", nor asked twice.
    assert again[-1] == StartAnswer("answer-2", BOTH, spoken=True, held=True)
    done = drive(core, ends(0.0, 3.5, BOTH))
    assert done[-1] == ReleaseAnswer("answer-2")
    starts = [action for action in [*again, *done] if isinstance(action, StartAnswer)]
    assert [start.prompt for start in starts] == [BOTH]


def test_other_final_words_drop_the_held_answer_and_ask_for_theirs() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "What does it cost?", 1.5))
    actions = drive(core, ends(0.0, 1.5, "What does it cost in Europe?"))
    assert actions[1:] == [
        DropAnswer("answer-1"),
        StartAnswer("answer-2", "What does it cost in Europe?", spoken=True),
    ]
    assert core.phase is Phase.PENDING


def test_words_that_change_at_a_later_pause_drop_and_speculate_again() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "Show the price.", 1.0))
    actions = drive(core, [(1.2, Transcript("Show the price in euros.", final=False))])
    assert actions[1:] == [
        DropAnswer("answer-1"),
        StartAnswer("answer-2", "Show the price in euros.", True, held=True),
    ]


def test_words_that_leave_the_sentence_open_are_not_asked_for() -> None:
    core = TurnTaking()
    actions = drive(core, paused(0.0, "I would like to know", 1.0))
    assert not [a for a in actions if isinstance(a, StartAnswer)] and core.phase is Phase.IDLE


def test_words_recognized_while_the_caller_speaks_are_not_asked_for() -> None:
    core = TurnTaking()
    drive(core, [(0.0, SpeechOnset(0.0)), (0.2, SpeechStarted(0.0))])
    actions = drive(core, [(0.8, Transcript("What does it cost?", final=False))])
    assert actions == [ShowTranscript("What does it cost?", False)] and core.phase is Phase.IDLE


def test_off_an_answer_starts_only_when_the_turn_ends() -> None:
    core = TurnTaking(TurnSettings(speculate=False))
    assert not [a for a in drive(core, paused(0.0, "What does it cost?", 1.5)) if isinstance(a, StartAnswer)]
    actions = drive(core, ends(0.0, 1.5, "What does it cost?"))
    assert actions[-1] == StartAnswer("answer-1", "What does it cost?", spoken=True)


def test_a_held_answer_joins_the_turn_whose_pending_answer_the_caller_cut() -> None:
    core = TurnTaking()
    # Turn one ends and is answered; the caller goes on before hearing it: it is dropped, to be joined.
    drive(core, [*paused(0.0, ONE, 1.0), *ends(0.0, 1.0, ONE)])
    cut = drive(core, [(1.6, SpeechOnset(1.6)), (1.8, SpeechStarted(1.6))])
    assert DropAnswer("answer-1") in cut
    held = drive(core, [(3.0, CallerPaused(3.0)), (3.2, Transcript("What does it include?", final=False))])
    prompt = f"{ONE} What does it include?"
    assert held[-1] == StartAnswer("answer-2", prompt, spoken=True, joined=True, held=True)
    assert drive(core, ends(1.6, 3.0, "What does it include?"))[-1] == ReleaseAnswer("answer-2")
    # Released: the joined turn is answered; a later turn does not join it again.
    drive(core, [(4.0, AnswerSpeaking("answer-2")), (9.0, AnswerEnded("answer-2"))])
    later = drive(core, [*paused(10.0, "Thanks.", 11.0), *ends(10.0, 11.0, "Thanks.")])
    assert StartAnswer("answer-3", "Thanks.", spoken=True, held=True) in later


def test_the_stop_button_or_a_typed_turn_drop_a_held_answer_in_silence() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "What does it cost?", 1.5))
    assert drive(core, [(1.8, StopPressed())]) == [DropAnswer("answer-1")]
    assert core.phase is Phase.IDLE
    drive(core, [(2.0, CallerResumed(2.0)), (2.5, CallerPaused(2.5)), (2.7, Transcript("And tax?", False))])
    typed = drive(core, [(2.9, Typed("What is the refund policy?"))])
    assert typed == [
        DropAnswer("answer-2"),
        StartAnswer("answer-3", "What is the refund policy?", spoken=False),
    ]


def test_a_barge_in_with_finished_words_interrupts_then_holds_the_new_question() -> None:
    core = TurnTaking()
    drive(core, [*paused(0.0, BOTH, 2.0), *ends(0.0, 2.0, BOTH), (3.0, AnswerSpeaking("answer-1"))])
    assert core.phase is Phase.SPEAKING
    over = drive(core, paused(5.5, "Stop, please.", 6.3))
    assert over[-2:] == [
        InterruptAnswer("answer-1"),
        StartAnswer("answer-2", "Stop, please.", True, held=True),
    ]
    # The caller goes on: the held "Stop, please." is dropped; the whole question is held, then released.
    drive(core, [(6.8, CallerResumed(6.8))])
    whole = "Stop, please. What does it cost?"
    again = drive(core, [(7.9, CallerPaused(7.9)), (8.1, Transcript(whole, final=False))])
    assert again[-1] == StartAnswer("answer-3", whole, True, held=True)
    assert drive(core, ends(5.5, 7.9, whole))[-1] == ReleaseAnswer("answer-3")


def test_a_failed_recognition_or_an_empty_final_drops_the_held_answer() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "What does it cost?", 1.5))
    failed = drive(
        core, [(2.0, TurnEnded(0.0, 1.5, 2.0, BY_SILENCE)), (2.1, RecognitionFailed("x", "y", True))]
    )
    assert failed[1] == DropAnswer("answer-1") and isinstance(failed[0], ReportError)
    drive(core, paused(3.0, "Hello.", 4.0))
    empty = drive(core, ends(3.0, 4.0, ""))
    assert DropAnswer("answer-2") in empty and core.phase is Phase.IDLE


def test_a_held_answer_that_ended_leaves_the_turn_to_be_asked_for_when_it_ends() -> None:
    core = TurnTaking()
    drive(core, paused(0.0, "What does it cost?", 1.5))
    drive(core, [(1.7, AnswerEnded("answer-1"))])
    assert core.phase is Phase.IDLE
    assert drive(core, ends(0.0, 1.5, "What does it cost?"))[-1] == StartAnswer(
        "answer-2", "What does it cost?", spoken=True
    )


def test_a_streaming_engines_words_heard_up_to_the_pause_are_asked_for_at_the_pause() -> None:
    core = TurnTaking()
    drive(core, [(0.0, SpeechOnset(0.0)), (0.2, SpeechStarted(0.0))])
    drive(core, [(0.9, Transcript("What does it cost?", final=False))])  # while the caller speaks
    assert drive(core, [(1.5, CallerPaused(1.5))]) == [
        StartAnswer("answer-1", "What does it cost?", spoken=True, held=True)
    ]
    # The same words again at the pause keep it; the caller going on drops it and forgets those words.
    assert drive(core, [(1.7, Transcript("What does it cost?", final=False))])[1:] == []
    assert drive(core, [(2.0, CallerResumed(2.0))]) == [DropAnswer("answer-1")]
    assert drive(core, [(2.8, CallerPaused(2.8))]) == []


def test_a_japanese_callers_finished_question_is_held_and_released_an_open_clause_is_not() -> None:
    core = TurnTaking(TurnSettings(language="ja"))
    held = drive(core, paused(0.0, "料金はいくらですか", 1.5))
    assert held[-1] == StartAnswer("answer-1", "料金はいくらですか", spoken=True, held=True)
    assert drive(core, ends(0.0, 1.5, "料金はいくらですか？"))[-1] == ReleaseAnswer("answer-1")
    other = TurnTaking(TurnSettings(language="ja"))
    actions = drive(other, paused(0.0, "支払いをしようとしたんですけど、", 1.0))
    assert not [a for a in actions if isinstance(a, StartAnswer)] and other.phase is Phase.IDLE
