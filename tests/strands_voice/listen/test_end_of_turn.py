"""The verdict at a caller's pause, from the turn-end model's probability and the words (sans-I/O), and the
word lists it reads (one data file, per language)."""

from __future__ import annotations

import pytest

from strands_voice.listen import THRESHOLDS, asks, dictating, judge_turn, strands, unfinished
from strands_voice.turns import interrupts, is_backchannel

# What Whisper wrote for the endpoint's own voice cut ~0.1 s into a pause, and Smart Turn's p for that
# audio: the sentences people break at a comma, and whole questions and statements.
FRAGMENTS = [
    ("I would like to know.", 0.661),  # Whisper closes it with a period; the audio falls like an end
    ("My order number is 427.", 0.976),  # a number being read: the audio is sure, the words are not
    ("So, the thing is", 0.110),
    ("I was wondering if...", 0.009),
    ("I need to change my.", 0.339),
    ("The problem is that.", 0.805),
    ("Well, I think that...", 0.242),
    ("Can you check whether?", 0.249),
    ("My email address is...", 0.026),
    ("Could you tell me?", 0.965),  # "tell me" asks for more, whatever the punctuation
    ("Could you tell me about that?", 0.208),  # a question the audio does not believe
]
COMPLETE = [
    ("What does the premium plan cost?", 0.973),
    ("Can I cancel my plan at any time?", 0.979),
    ("I want to cancel my subscription.", 0.908),
    ("Please send me the invoice.", 0.978),
    ("Tell me about the history of the bicycle.", 0.987),
    ("What does the premium plan cost?", 0.40),  # a question: its words say it, the audio need only not deny
]


@pytest.mark.parametrize(("words", "p"), FRAGMENTS)
def test_a_fragment_is_incomplete_whatever_the_audio_says(words: str, p: float) -> None:
    verdict = judge_turn(p, words)
    assert not verdict.complete and verdict.p <= 0.25


@pytest.mark.parametrize(("words", "p"), COMPLETE)
def test_a_finished_question_or_statement_is_complete(words: str, p: float) -> None:
    assert judge_turn(p, words).complete


def test_without_words_the_audio_decides_and_a_question_raises_p() -> None:
    assert judge_turn(0.7, None).complete and not judge_turn(0.3, None).complete
    assert judge_turn(0.45, "Is it free?").p == 0.9
    assert judge_turn(0.45, "It is free.").p == 0.45


# Each kind of utterance at a pause, with what the sound said: (words, Smart Turn's p, end pitch fall).
# Smart Turn scores a human reader's finished statement low; the words and a falling voice end it.
ENDS_WITHIN_HALF_A_SECOND = [
    ("Your message has been saved.", 0.2, -6.1),  # a statement, voice fallen
    ("Your call cannot be completed as dialed.", 0.3, None),  # a statement, pitch unknown
    ("Please check the number and dial again.", 0.1, 2.0),  # a command, voice not fallen
    ("Yes.", 0.2, None),  # a short answer
    ("Thank you", 0.2, None),  # no final mark
    ("What does the premium plan cost?", 0.1, 1.5),  # a question the audio does not believe
    ("Goodbye!", 0.8, -5.4),
    ("Yes, I do.", 0.2, None),  # an auxiliary after its subject: the rest of the verb left out
    ("He might have been made more respectable than he was.", 0.1, None),
]


@pytest.mark.parametrize(("words", "p", "fall"), ENDS_WITHIN_HALF_A_SECOND)
def test_every_kind_of_finished_utterance_ends_within_half_a_second(
    words: str, p: float, fall: float | None
) -> None:
    verdict = judge_turn(p, words, fall=fall)
    assert verdict.wait_s is not None and verdict.wait_s <= 0.5


def test_a_fallen_voice_makes_a_statement_complete_that_the_audio_model_doubts() -> None:
    assert not judge_turn(0.2, "Your message has been saved.").complete
    assert judge_turn(0.2, "Your message has been saved.", fall=-6.1).complete
    assert not judge_turn(0.2, "Your message has been saved.", fall=1.0).complete  # level or rising: wait
    assert not judge_turn(0.01, "Your message has been saved.", fall=-6.1).complete  # the audio denies it


def test_a_fallen_voice_makes_a_question_complete_that_the_audio_model_doubts() -> None:
    """Smart Turn scores some finished questions near 0 (0.01 for "What does the premium plan cost?" in
    one of the endpoint's voices, which fell 2.6 semitones); the words and the voice end them."""
    verdict = judge_turn(0.01, "What does the premium plan cost?", fall=-2.6)
    assert verdict.complete and verdict.wait_s == THRESHOLDS.question_wait_s
    level = judge_turn(0.01, "What does the premium plan cost?", fall=1.5)
    assert not level.complete and level.wait_s == THRESHOLDS.finished_wait_s
    assert not judge_turn(0.01, "Could you tell me?", fall=-6.0).complete  # "tell me" still asks for more


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("Who am I speaking to?", True),
        ("Which folder should I save the message to?", True),
        ("What is the weather like?", True),
        ("What do you know about?", True),
        ("I have a question. Who am I speaking to?", True),
        ("Okay, so what is this charge for?", True),
        ("Who is it? I want to talk to?", False),  # the question word is in another sentence
        ("Who am I speaking to", False),  # no question mark: a statement cut short
        ("Can I speak to?", False),  # no question word: the object is missing
        ("I want to talk to?", False),
        ("Who is it?", False),
    ],
)
def test_a_question_that_strands_its_preposition(words: str, expected: bool) -> None:
    assert strands(words) is expected


def test_a_question_on_a_stranded_preposition_ends_on_a_sure_sound_or_after_a_pause_mid_sentence() -> None:
    """ "Which folder should I save the message to?" (a human recording: Smart Turn 0.98) ends now; "What
    is this charge for?" is written the same whether finished or paused before "... on my bill", and
    Smart Turn scores both low: it waits longer than a pause mid-sentence, not the open-turn limit."""
    sure = judge_turn(0.98, "Which folder should I save the message to?", fall=-8.0)
    assert sure.complete and sure.wait_s == THRESHOLDS.question_wait_s
    unsure = judge_turn(0.02, "What is this charge for?", fall=-7.0)
    assert not unsure.complete and unsure.wait_s == THRESHOLDS.stranded_wait_s
    assert 0.8 < THRESHOLDS.stranded_wait_s < 2.0


@pytest.mark.parametrize("words", ["4 1 5,", "My card number is 4 1 5, 5 5 5.", "four one five", "415-"])
def test_digits_dictated_in_groups_wait_longer_than_the_pause_between_groups(words: str) -> None:
    """A caller reading a number pauses 0.8 s between its groups; the audio (each group ends low) and a
    final period do not end the turn there."""
    verdict = judge_turn(0.95, words, fall=-6.0)
    assert dictating(words)
    assert not verdict.complete and verdict.wait_s is not None and verdict.wait_s >= 1.0


@pytest.mark.parametrize(
    "words", ["I would like to know,", "So the thing is", "I was talking to", "Can you send me the", "and"]
)
def test_words_left_open_wait_for_the_open_turn_limit(words: str) -> None:
    verdict = judge_turn(0.99, words, fall=-8.0)
    assert not verdict.complete and verdict.wait_s is None


@pytest.mark.parametrize(
    ("open_words", "closed_words"),
    [
        ("The problem is.", "Yes, it is."),
        ("I was", "Better than I was."),
        ("So I was.", "No, I was."),
        ("I think it is", "Just as it is."),
        ("What I would", "Yeah, I would."),
    ],
)
def test_an_auxiliary_ending_stays_open_unless_its_words_leave_the_verb_out(
    open_words: str, closed_words: str
) -> None:
    assert unfinished(open_words) and not unfinished(closed_words)


def test_a_complete_turn_still_waits_out_a_breath_between_sentences() -> None:
    verdict = judge_turn(0.99, "Please leave your message after the tone.")
    assert verdict.complete and verdict.wait_s == THRESHOLDS.complete_wait_s
    assert 0.1 <= THRESHOLDS.question_wait_s <= THRESHOLDS.complete_wait_s <= 0.3


def test_without_words_only_a_sure_audio_ends_the_turn() -> None:
    assert judge_turn(0.8, None).complete and judge_turn(0.8, "").complete
    assert judge_turn(0.3, None, fall=-8.0) == judge_turn(0.3, None)
    assert judge_turn(0.3, None).wait_s is None


def test_the_sweep_scales_every_wait() -> None:
    doubled = THRESHOLDS.scaled(2.0)
    assert doubled.finished_wait_s == 2 * THRESHOLDS.finished_wait_s
    assert doubled.number_wait_s == 2 * THRESHOLDS.number_wait_s
    assert doubled.stranded_wait_s == 2 * THRESHOLDS.stranded_wait_s
    assert doubled.complete_p == THRESHOLDS.complete_p


def test_questions_end_with_a_question_mark() -> None:
    assert asks("Is that all?") and not asks("That is all.")


def test_a_language_without_its_own_lists_is_judged_by_the_sound_alone() -> None:
    # No guess from English: German words are neither unfinished, a question, a backchannel nor a stop.
    assert not unfinished("Ich möchte wissen, ob", "de") and not asks("Was kostet das?", "de")
    assert not is_backchannel("Uh-huh.", "de") and not interrupts("Stop.", "de")
    assert judge_turn(0.2, "I would like to know", "de").complete is False  # the audio's 0.2 decides
    assert judge_turn(0.7, "I would like to know", "de").complete is True
