"""The recognizer's check of a transcript against its audio: loops cut or not trusted, nothing invented."""

from __future__ import annotations

import numpy as np
import pytest

from strands_voice.listen._transcript_guard import check_transcript, collapse_loops, voiced_seconds


def test_five_five_written_as_twenty_fives_is_not_trusted() -> None:
    """What Whisper wrote for a caller saying "five five" (about a second of voice)."""
    checked = check_transcript(" ".join(["5"] * 20), voiced_s=1.0)
    assert not checked.trusted and "loop" in checked.reason


def test_a_sentence_written_three_times_is_said_once() -> None:
    looped = " ".join(["How many devices can I use offline?"] * 3)
    checked = check_transcript(looped, voiced_s=2.0)
    assert checked == check_transcript("How many devices can I use offline?", 2.0)
    assert checked.trusted and checked.text == "How many devices can I use offline?"


def test_a_loop_cut_short_by_the_decoder_is_dropped_too() -> None:
    looped = "Weasels have eaten our phone system. Weasels have eaten our phone system. Weasels have"
    assert collapse_loops(looped) == "Weasels have eaten our phone system."


@pytest.mark.parametrize(
    "said", ["5 5 5", "no no no no", "4 1 5, 5 5 5, 1 2 1 2", "Thank you, thank you.", "Press 1. Press 2."]
)
def test_what_people_repeat_is_kept_as_said(said: str) -> None:
    assert check_transcript(said, voiced_s=2.0) == check_transcript(said, 2.0)
    assert check_transcript(said, voiced_s=2.0).text == said and check_transcript(said, 2.0).trusted


def test_more_words_than_the_voice_can_hold_are_not_trusted() -> None:
    words = "please send me the full invoice for my last three orders right away today"
    assert check_transcript(words, voiced_s=2.5).trusted  # 14 words, 2.5 s: a fast speaker
    assert not check_transcript(words, voiced_s=1.0).trusted  # 14 words in a second of voice


def test_a_digit_pair_looping_is_not_trusted() -> None:
    assert not check_transcript("4, 1, 5, " + "1, 2, " * 8, voiced_s=3.0).trusted


def test_voiced_seconds_count_the_sound_not_the_silence() -> None:
    tone = (0.2 * np.sin(2 * np.pi * 150 * np.arange(16000) / 16000)).astype(np.float32)
    audio = np.concatenate([np.zeros(8000, np.float32), tone, np.zeros(16000, np.float32)])
    assert voiced_seconds(audio) == pytest.approx(1.0, abs=0.04)
    assert voiced_seconds(np.zeros(16000, np.float32)) == 0.0


@pytest.mark.parametrize("text", ["5 5", "No, no.", "6, 6, 6", "It is, is it"])
def test_a_word_said_twice_in_a_row_is_seen(text: str) -> None:
    from strands_voice.listen._transcript_guard import repeats_a_word

    assert repeats_a_word(text)


@pytest.mark.parametrize("text", ["4 1 5", "Ten of clubs.", "no one knows", ""])
def test_words_that_do_not_repeat_are_not(text: str) -> None:
    from strands_voice.listen._transcript_guard import repeats_a_word

    assert not repeats_a_word(text)


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [("5 5", "5, 5.", True), ("No, no.", "no no", True), ("5 5", "5 5 5", False), ("5 5", "55", False)],
)
def test_two_readings_say_the_same_words_whatever_their_marks(first: str, second: str, same: bool) -> None:
    from strands_voice.listen._transcript_guard import same_words

    assert same_words(first, second) is same
