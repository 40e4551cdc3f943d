"""The verdict at a caller's pause, from the turn-end model's probability and the words (sans-I/O), and the
word lists it reads (one data file, per language)."""

from __future__ import annotations

import pytest

from strands_voice.listen import asks, interrupts, is_backchannel, judge_turn, unfinished

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


@pytest.mark.parametrize(
    ("text", "backchannel"),
    [
        ("Uh-huh.", True),
        ("Mm-hmm.", True),
        ("Right.", True),
        ("Okay. Okay.", True),
        ("I see.", True),
        ("Right hand.", False),
        ("Yeah, but what about the price?", False),
        ("", False),
        ("...", False),
    ],
)
def test_backchannels_are_only_a_listeners_feedback(text: str, backchannel: bool) -> None:
    assert is_backchannel(text) is backchannel


def test_interruptions_and_questions_stop_a_speaker_however_short() -> None:
    assert (
        interrupts("Stop.") and interrupts("Wait, wait.") and interrupts("Hold on.") and interrupts("What?")
    )
    assert not interrupts("Right.") and not interrupts("Mamo.")
    assert asks("Is that all?") and not asks("That is all.")


def test_a_language_without_its_own_lists_is_judged_by_the_sound_alone() -> None:
    # No guess from English: German words are neither unfinished, a question, a backchannel nor a stop.
    assert not unfinished("Ich möchte wissen, ob", "de") and not asks("Was kostet das?", "de")
    assert not is_backchannel("Uh-huh.", "de") and not interrupts("Stop.", "de")
    assert judge_turn(0.2, "I would like to know", "de").complete is False  # the audio's 0.2 decides
    assert judge_turn(0.7, "I would like to know", "de").complete is True
