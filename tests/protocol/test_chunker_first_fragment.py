"""The chunker's forced first cut: a long unpunctuated first sentence is cut between words, once."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strands_voice_protocol.chunker import IncrementalSentenceChunker

LONG = (
    "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the great lamp "
    "that guided the small fishing boats safely home across the dark and restless water of the wider bay. "
    "Then he slept."
)


def _chunks(fragments: list[str], **kwargs: int | None) -> list[str]:
    chunker = IncrementalSentenceChunker(**kwargs)  # type: ignore[arg-type]
    out: list[str] = []
    for fragment in fragments:
        out += chunker.feed(fragment)
    return out + chunker.finish()


def test_a_long_first_sentence_is_cut_at_the_first_space_past_the_limit() -> None:
    chunks = _chunks([LONG], first_chunk_max_chars=60)
    assert chunks[0] == "The old lighthouse keeper climbed the narrow spiral stairs every"
    assert chunks[1].startswith("evening to light") and chunks[1].endswith("wider bay.")
    assert chunks[2] == "Then he slept."
    assert _chunks([LONG])[0].endswith("wider bay.")  # off by default


def test_a_clause_or_sentence_boundary_before_the_limit_wins() -> None:
    assert _chunks(["Sure, here is the plan for the whole week ahead of us all."], first_chunk_max_chars=30)[
        0
    ] == ("Sure, here is the plan for the")
    text = "Yes. The old lighthouse keeper climbed the narrow spiral stairs every evening."
    assert _chunks([text], first_chunk_max_chars=20) == [
        "Yes.",
        "The old lighthouse keeper climbed the narrow spiral stairs every evening.",
    ]
    text = "Well, the old lighthouse keeper climbed the narrow spiral stairs every evening."
    assert _chunks([text], first_chunk_min_chars=4, first_chunk_max_chars=30)[0] == "Well,"


def test_no_cut_right_after_a_dot() -> None:
    text = "Yesterday afternoon our friend Dr. Lee climbed the stairs."
    assert _chunks([text], first_chunk_max_chars=33)[0] == "Yesterday afternoon our friend Dr. Lee"


def test_first_chunk_max_chars_must_be_positive() -> None:
    with pytest.raises(ValueError, match="first_chunk_max_chars"):
        IncrementalSentenceChunker(first_chunk_max_chars=0)


@st.composite
def _fragmented(draw: st.DrawFn) -> list[str]:
    words = draw(
        st.lists(st.sampled_from(["the", "keeper", "lamp", "Dr.", "a,", "sea.", "bay", "\n"]), max_size=40)
    )
    text = " ".join(words)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=20)))
    return [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]


@given(_fragmented(), st.sampled_from([10, 30, 60]))
@example(["the keeper lamp bay the keeper lamp bay"], 10)
def test_the_cut_does_not_depend_on_how_text_arrives(fragments: list[str], limit: int) -> None:
    whole = _chunks(["".join(fragments)], first_chunk_max_chars=limit)
    assert _chunks(fragments, first_chunk_max_chars=limit) == whole
    assert _chunks(list("".join(fragments)), first_chunk_max_chars=limit) == whole
