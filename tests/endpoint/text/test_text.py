"""Segmentation (pure functions) and the offline English G2P."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.engines.pipeline import synthesize_segments
from kokoro_endpoint.text.segmentation import (
    MAX_PHONEMES,
    MIN_CLAUSE_CHARS,
    split_clauses,
    split_phonemes,
    split_segments,
    split_sentences,
)


def test_split_sentences() -> None:
    assert split_sentences("Hello there. How are you?  Fine!\nNew line") == [
        "Hello there.",
        "How are you?",
        "Fine!",
        "New line",
    ]
    assert split_sentences('He said "stop." Then left.') == ['He said "stop."', "Then left."]
    assert split_sentences("   \n  ") == []
    assert split_sentences("No end mark") == ["No end mark"]
    assert split_sentences("3.5 percent") == ["3.5 percent"]  # no space after the dot: not a boundary


def test_split_sentences_keeps_abbreviations_and_initials_inside_the_sentence() -> None:
    # Found in the benchmark's answer: "Dr." and "approx." were each synthesized as a sentence of their own.
    assert split_sentences(
        "Dr. Lee's team reviews every account within approx. two business days. Done."
    ) == [
        "Dr. Lee's team reviews every account within approx. two business days.",
        "Done.",
    ]
    assert split_sentences("Upgrade, e.g. when storage runs out. J. Smith agreed.") == [
        "Upgrade, e.g. when storage runs out.",
        "J. Smith agreed.",
    ]
    assert split_sentences("See No. 5 today. The answer is no. Then stop.") == [
        "See No. 5 today.",
        "The answer is no.",
        "Then stop.",
    ]
    assert split_sentences("Call Mr.\nSmith") == ["Call Mr. Smith"]  # a line break after "Mr." too


def test_split_clauses_cuts_long_sentences_at_clause_punctuation_only() -> None:
    sentence = "It costs $24.99 per month, and you can cancel at any time without a fee."
    assert split_clauses(sentence, 60) == [
        "It costs $24.99 per month,",
        "and you can cancel at any time without a fee.",
    ]
    assert split_clauses(sentence, 100) == [sentence]  # short enough: whole
    # No boundary leaving MIN_CLAUSE_CHARS on both sides: whole, never cut between words.
    assert split_clauses("If you like, I can start a 14-day free trial for you right now.", 20) == [
        "If you like, I can start a 14-day free trial for you right now."
    ]
    assert split_clauses("A sentence with no clause punctuation at all but very many words in it.", 20) == [
        "A sentence with no clause punctuation at all but very many words in it."
    ]
    # The last boundary within the limit, else the first past it; "1,000" is no boundary.
    assert split_clauses("We sold 1,000 units last year; this year, we expect far more than that.", 40) == [
        "We sold 1,000 units last year;",
        "this year, we expect far more than that.",
    ]
    assert split_clauses(
        "One long opening clause without a break until here, then a tail that is long.", 20
    ) == [
        "One long opening clause without a break until here,",
        "then a tail that is long.",
    ]


@given(st.text(alphabet="ab ,;:—.", max_size=400), st.integers(min_value=1, max_value=120))
@example(":::::::::::::::: :::::::::::::::", 1)  # a boundary whose remainder is short once trimmed
def test_split_clauses_loses_nothing_and_never_splits_off_a_fragment(sentence: str, max_chars: int) -> None:
    phrases = split_clauses(sentence, max_chars)
    assert "".join(phrases).replace(" ", "") == sentence.replace(" ", "").strip()
    if len(phrases) > 1:
        assert all(len(phrase) >= MIN_CLAUSE_CHARS for phrase in phrases)


def test_split_segments() -> None:
    text = "Here's a quick overview of the Premium plan, which suits most households well. Bye."
    assert split_segments(text) == [
        "Here's a quick overview of the Premium plan,",
        "which suits most households well.",
        "Bye.",
    ]
    assert split_segments(text, None) == split_sentences(text)
    assert split_segments("   ") == []


def test_split_phonemes_prefers_punctuation_then_spaces() -> None:
    assert split_phonemes("abc. def", limit=6) == ["abc.", "def"]
    assert split_phonemes("ab, cd ef gh", limit=7) == ["ab,", "cd ef", "gh"]
    assert split_phonemes("abcdefghij", limit=4) == ["abcd", "efgh", "ij"]
    assert split_phonemes("short") == ["short"]


@given(st.text(alphabet="abcˈə ,.!?", max_size=2000), st.integers(min_value=1, max_value=MAX_PHONEMES))
def test_split_phonemes_keeps_everything_within_the_limit(phonemes: str, limit: int) -> None:
    pieces = split_phonemes(phonemes, limit)
    assert all(0 < len(piece) <= limit for piece in pieces)
    assert "".join(pieces).replace(" ", "") == phonemes.replace(" ", "")


def test_english_g2p_is_offline_and_fits_the_vocabulary(onnx_engine: object) -> None:
    from kokoro_endpoint.reading.g2p import EnglishG2P

    g2p = EnglishG2P()
    phonemes = g2p("Hello world, this is Kokoro.")
    assert "wˈɜɹld" in phonemes
    vocab = onnx_engine._vocab  # type: ignore[attr-defined]
    assert all(p in vocab for p in phonemes)


def test_english_g2p_repeats_a_sentence_from_its_cache(onnx_engine: object) -> None:
    from kokoro_endpoint.reading.g2p import EnglishG2P

    g2p = EnglishG2P(cache_size=1)
    first = g2p.with_tokens("The red kite circled above the quiet valley.")
    again = g2p.with_tokens("The red kite circled above the quiet valley.")
    assert (again, g2p.cache_hits) == (first, 1)
    g2p.with_tokens("Another sentence.")  # pushes the first one out
    assert g2p.with_tokens("The red kite circled above the quiet valley.") == first
    assert g2p.cache_hits == 1
    uncached = EnglishG2P(cache_size=0)
    assert uncached.with_tokens("Another sentence.")[0] == g2p.with_tokens("Another sentence.")[0]
    assert uncached.cache_hits == 0


def test_synthesize_segments_speaks_a_long_sentence_phrase_by_phrase(onnx_engine: Any) -> None:
    """With the real engine: the first phrase's audio is ready before the rest of the sentence is made."""
    sentence = "It costs $24.99 per month, and you can cancel at any time without a fee."
    voice = onnx_engine.default_voice
    phrased = list(synthesize_segments(onnx_engine, sentence, voice, 1.0, 60))
    whole = list(synthesize_segments(onnx_engine, sentence, voice, 1.0, None))
    # The engine may stream each phrase in windows: count audio, not arrays.
    whole_size = sum(segment.audio.size for segment in whole)
    assert len(phrased) >= 2 and len(whole) >= 1
    seconds = sum(segment.audio.size for segment in phrased) / onnx_engine.sample_rate
    assert seconds == pytest.approx(whole_size / onnx_engine.sample_rate, rel=0.25)
    assert phrased[0].audio.size < 0.6 * whole_size


class RecordingEngine:
    """Records the pieces it is asked for and whether each generator was closed."""

    name = "recording"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.closed: list[str] = []

    def warm_up(self) -> None:
        pass

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        self.asked.append(text)
        try:
            yield np.zeros(4, dtype=np.float32)
            yield np.zeros(4, dtype=np.float32)
        finally:
            self.closed.append(text)


def test_synthesize_segments_closes_the_engine_call_it_stops_in() -> None:
    engine = RecordingEngine()
    text = "First sentence here. Second, much longer sentence that goes on, and on, for quite a while."
    segments = synthesize_segments(engine, text, "v", 1.0, 40)  # type: ignore[arg-type]
    next(segments)
    next(segments)
    next(segments)  # the first segment of the second piece
    segments.close()  # a cancel
    assert engine.asked == ["First sentence here.", "Second, much longer sentence that goes on,"]
    assert engine.closed == engine.asked  # nothing left running, nothing asked for after the cancel
