"""Segmentation (pure functions) and the offline English G2P."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from kokoro_endpoint.text import MAX_PHONEMES, split_phonemes, split_sentences


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
    from kokoro_endpoint.g2p import EnglishG2P

    g2p = EnglishG2P()
    phonemes = g2p("Hello world, this is Kokoro.")
    assert "wˈɜɹld" in phonemes
    vocab = onnx_engine._vocab  # type: ignore[attr-defined]
    assert all(p in vocab for p in phonemes)
