"""The chunker on Japanese: 。！？ end sentences with no space, 、 splits a long first chunk, a quotation
the sentence goes on from stays whole, and the chunks never depend on how the text was streamed."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.sentences import sentence_ends, split_at_sentence_ends

TEXTS = [
    "今日はいい天気ですね。東京へ行きます！明日は雨でしょうか？",
    "彼は「はい。」と言った。「本当？」って聞いた。「はい。」次です。",
    "料金は月額２４．９９ドルで、いつでも解約できます。主な特長は三つあります。",
    "Kokoroは日本語も話せます。It speaks English too. では、また。",
]


def stream(text: str, cuts: list[int], **options: int) -> list[str]:
    chunker = IncrementalSentenceChunker(**options)
    bounds = [0, *sorted(set(cuts)), len(text)]
    chunks = [chunk for lo, hi in itertools.pairwise(bounds) for chunk in chunker.feed(text[lo:hi])]
    tail = chunker.flush()
    return [*chunks, tail] if tail else chunks


def test_japanese_sentences_end_at_full_width_terminators() -> None:
    assert split_at_sentence_ends(TEXTS[0]) == [
        "今日はいい天気ですね。",
        "東京へ行きます！",
        "明日は雨でしょうか？",
    ]
    assert stream(TEXTS[0], []) == split_at_sentence_ends(TEXTS[0])


def test_a_quotation_the_sentence_goes_on_from_stays_in_it() -> None:
    assert split_at_sentence_ends(TEXTS[1]) == [
        "彼は「はい。」と言った。",
        "「本当？」って聞いた。",
        "「はい。」",
        "次です。",
    ]
    assert stream(TEXTS[1], list(range(len(TEXTS[1])))) == split_at_sentence_ends(TEXTS[1])


def test_a_long_first_sentence_is_cut_at_a_japanese_comma() -> None:
    text = "東京、大阪、京都、そして名古屋と福岡と札幌に行きました、それから帰りました。"
    assert stream(text, [], first_chunk_min_chars=10) == [
        "東京、大阪、京都、そして名古屋と福岡と札幌に行きました、",
        "それから帰りました。",
    ]


@pytest.mark.parametrize("text", TEXTS)
@given(cuts=st.lists(st.integers(min_value=1, max_value=60), max_size=12))
def test_japanese_chunks_do_not_depend_on_fragmentation(text: str, cuts: list[int]) -> None:
    cuts = [cut for cut in cuts if cut < len(text)]
    whole = stream(text, [], first_chunk_min_chars=1000)
    assert stream(text, cuts, first_chunk_min_chars=1000) == whole
    bounds = [0, *sentence_ends(text), len(text)]
    assert whole == [text[lo:hi].strip() for lo, hi in itertools.pairwise(bounds)]
