"""Bad input at the codecs: what tests/protocol does not already fuzz.

tests/protocol covers well-formed SSE streams cut anywhere, the frame codec on JSON-ish and random input, and
the chunker on token soups. Added here: SSE decoding of hostile byte soup (chunking independence, only
SSEDecodeError), pathological chunker input that could go quadratic or crash (lone surrogates, control
characters, 20,000-character runs of Markdown openers) and audio decoding of garbage. Hypothesis is
enough here; atheris would add a C extension build for no input class hypothesis does not reach.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strands_voice_protocol.audio import decode_audio
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import AudioEncodingError, SSEDecodeError
from strands_voice_protocol.speech_text import clean_for_speech
from strands_voice_protocol.sse import SSEDecoder, SSEEvent
from support.timing import best_time

SSE_TOKENS = [
    b"data:", b"data: ", b"event:", b"id:", b"id: 1", b"retry:", b"retry: 5", b"retry: x", b":", b" ",
    b"\r", b"\n", b"\r\n", b"\n\n", b"\xef\xbb\xbf", b"\x00", b"\xff", b"\xc3", b"\xa9", b"x", b"{", b"}",
    b'{"type":"audio_chunk"}', b"\xe6\x97\xa5",
]  # fmt: skip

sse_soup = st.one_of(
    st.binary(max_size=600),
    st.lists(st.sampled_from(SSE_TOKENS), max_size=80).map(b"".join),
)


def _decode(chunks: list[bytes], max_event_bytes: int) -> list[SSEEvent] | str:
    decoder = SSEDecoder(max_event_bytes=max_event_bytes)
    events: list[SSEEvent] = []
    try:
        for chunk in chunks:
            events += decoder.feed(chunk)
        events += decoder.flush()
    except SSEDecodeError:
        return "limit"
    assert decoder.retry is None or isinstance(decoder.retry, int)
    return events


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sse_soup, st.data())
def test_reliability_fuzz_sse_byte_soup_same_events_however_cut(stream: bytes, data: st.DataObject) -> None:
    # Only SSEDecodeError may escape (anything else propagates and fails), and the events never depend
    # on where the transport cut the bytes.
    whole = _decode([stream], 10_000)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=25)))
    pieces = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    assert _decode(pieces, 10_000) == whole
    assert _decode([bytes([b]) for b in stream], 10_000) == whole
    if whole != "limit":
        for event in whole:
            assert isinstance(event.data, str) and isinstance(event.event, str) and event.event


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 40), st.binary(min_size=1, max_size=64))
def test_reliability_fuzz_sse_endless_line_is_refused_not_buffered(step: int, filler: bytes) -> None:
    # A peer that never ends its line or event: the decoder refuses past its limit instead of growing.
    filler = filler.replace(b"\r", b"x").replace(b"\n", b"x")
    decoder = SSEDecoder(max_event_bytes=4096)
    with pytest.raises(SSEDecodeError):
        for _ in range(10_000):
            decoder.feed(b"data: " + filler * step if step % 2 else filler * step)


# ---- chunker -----------------------------------------------------------------------------------------

any_characters = st.characters(codec=None, categories=None)  # includes lone surrogates and controls
hostile_text = st.one_of(
    st.text(alphabet=any_characters, max_size=300),
    st.text(
        alphabet=st.sampled_from(list("*_`~#>[](){}<>|!.?\u200b\u202e\ufeff\x00\x1b\u0301")), max_size=300
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile_text, st.sampled_from([(40, 350), (None, 20), (10, 20)]), st.data())
def test_reliability_fuzz_chunker_hostile_text(
    text: str, limits: tuple[int | None, int], data: st.DataObject
) -> None:
    first, limit = limits
    chunker = IncrementalSentenceChunker(first_chunk_min_chars=first, max_chunk_chars=limit)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=20)))
    chunks: list[str] = []
    for a, b in itertools.pairwise([0, *cuts, len(text)]):
        chunks += chunker.feed(text[a:b])
    tail = chunker.flush()
    if tail is not None:
        chunks.append(tail)
    for chunk in chunks:
        # Never an empty or whitespace-only request to the endpoint (it would be invalid_request).
        assert chunk.strip(), chunks
        assert len(chunk) <= limit
        chunk.encode("utf-8")  # sendable: no lone surrogate survives into a request
    clean_for_speech(text).encode("utf-8")  # never raises


SIZE = 6_000
PATHOLOGICAL = {
    "brackets": "[" * SIZE,
    "link_openers": "[a](" * (SIZE // 4),
    "stars": "*" * SIZE,
    "backticks": "`" * SIZE,
    "fence_lines": "```\n" * (SIZE // 4),
    "abbrev": "e.g. " * (SIZE // 5),
    "url": "https://a.io/" + "b" * SIZE,
    "parens": "(" * (SIZE // 2) + ")" * (SIZE // 2),
    "emoji": "😀" * SIZE,
    "words": "word " * (SIZE // 5),
    "word_then_dots": "Hello" + "." * SIZE,
    "sentence_then_spaces": "Hello there." + " " * SIZE,
}


def _feed_one_at_a_time(text: str) -> tuple[float, list[str]]:
    def run() -> list[str]:
        chunker = IncrementalSentenceChunker()
        chunks: list[str] = []
        for character in text:
            chunks += chunker.feed(character)
        tail = chunker.flush()
        if tail is not None:
            chunks.append(tail)
        return chunks

    return best_time(run)


@pytest.mark.parametrize("name", list(PATHOLOGICAL))
def test_reliability_fuzz_chunker_pathological_input_is_linear(name: str) -> None:
    # An LLM (or a prompt-injected one) can emit anything; the chunker sits on the hot path of every
    # answer. Fed one character at a time, 6,000 characters of any shape must cost about what 6,000
    # characters of plain words cost (measured here, best of three, so a busy machine slows both alike);
    # quadratic re-scanning costs ~100x more.
    baseline, _ = _feed_one_at_a_time(PATHOLOGICAL["words"])
    elapsed, chunks = _feed_one_at_a_time(PATHOLOGICAL[name])
    assert elapsed < 0.5 + 10 * baseline, f"{name}: {elapsed:.2f} s vs {baseline:.2f} s for plain words"
    assert all(chunk.strip() and len(chunk) <= 350 for chunk in chunks)


# ---- audio decoding ------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["wav", "mp3", "opus", "pcm16"]), st.binary(max_size=2000))
def test_reliability_fuzz_decode_audio_garbage(audio_format: str, data: bytes) -> None:
    # A consumer decoding a corrupted chunk gets AudioEncodingError or PCM, never another exception.
    try:
        pcm = decode_audio(data, audio_format)
    except AudioEncodingError:
        return
    assert isinstance(pcm, bytes) and len(pcm) % 2 == 0
