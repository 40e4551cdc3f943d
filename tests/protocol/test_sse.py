"""SSE codec: encoder output, spec parsing rules, chunking independence (property test), memory bound."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strands_voice_protocol.errors import SSEDecodeError, StrandsVoiceError, TextEncodingError
from strands_voice_protocol.sse import SSEDecoder, SSEEvent, encode_sse, encode_sse_event


def decode_all(chunks: list[bytes], **kwargs: object) -> list[SSEEvent]:
    decoder = SSEDecoder(**kwargs)  # type: ignore[arg-type]
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += decoder.feed(chunk)
    events += decoder.flush()
    return events


def test_core_sse_encode_is_one_data_line() -> None:
    frame = encode_sse({"type": "text_delta", "seq": 1, "text": "héllo\nworld 你好"})
    assert frame.startswith(b"data: {") and frame.endswith(b"}\n\n")
    assert frame.count(b"\n") == 2  # the newline inside the string is escaped by JSON
    assert json.loads(frame[len(b"data: ") : -2]) == {
        "type": "text_delta",
        "seq": 1,
        "text": "héllo\nworld 你好",
    }
    [event] = decode_all([frame])
    assert event.json() == {"type": "text_delta", "seq": 1, "text": "héllo\nworld 你好"}
    assert event.event == "message" and event.id is None


def test_core_sse_encode_event_fields() -> None:
    frame = encode_sse_event("line one\nline two", event="audio", id="42")
    assert frame == b"event: audio\nid: 42\ndata: line one\ndata: line two\n\n"
    assert decode_all([frame]) == [SSEEvent("line one\nline two", "audio", "42")]
    with pytest.raises(ValueError):
        encode_sse_event("x", event="a\nb")
    with pytest.raises(ValueError):
        encode_sse_event("x", id="a\0")


def test_core_sse_spec_rules() -> None:
    stream = (
        b"\xef\xbb\xbf: a comment\r\n"
        b"retry: 1500\r\n"
        b"event: custom\r"
        b"id: 7\n"
        b"data: first\r\n"
        b"data:second\r\n"
        b"data\r\n"
        b"unknown: ignored\n"
        b"\r\n"
        b"data:  two spaces\n"
        b"id\n"
        b"\n"
        b"event: only-type\n"
        b"\n"  # no data: not dispatched, type reset
        b"data: after\n"
        b"\n"
        b"id: bad\0id\n"
        b"data: nul id ignored\n"
        b"\n"
        b"data: incomplete at end"
    )
    decoder = SSEDecoder()
    events = decoder.feed(stream)
    assert events == [
        SSEEvent("first\nsecond\n", "custom", "7"),
        SSEEvent(" two spaces", "message", ""),
        SSEEvent("after", "message", ""),
        SSEEvent("nul id ignored", "message", ""),
    ]
    assert decoder.retry == 1500
    assert decoder.flush() == []  # the spec discards an event the stream ended in the middle of
    assert decode_all([b"data: tail"], dispatch_incomplete=True) == [SSEEvent("tail")]


def test_core_sse_bom_only_at_start_and_split() -> None:
    assert decode_all([b"\xef", b"\xbb", b"\xbfdata: x\n\n"]) == [SSEEvent("x")]
    # A BOM later in the stream is data, not skipped.
    assert decode_all([b"data: x\n\n\xef\xbb\xbfdata: y\n\n"]) == [SSEEvent("x")]


def test_core_sse_utf8_split_and_invalid_bytes() -> None:
    raw = encode_sse({"text": "日本語 ✓"})
    assert decode_all([raw[:8], raw[8:9], raw[9:]])[0].json() == {"text": "日本語 ✓"}
    assert decode_all([b"data: \xff\xfe ok\n\n"]) == [SSEEvent("\ufffd\ufffd ok")]


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: encode_sse_event("x", id="\ud800"), "id"),
        (lambda: encode_sse_event("x", event="a\udfffb"), "event"),
        (lambda: encode_sse_event("ok \ud800 ok"), "data"),
        (lambda: encode_sse({"type": "text_delta", "text": "\udc00"}), "event.text"),
        (
            lambda: encode_sse({"type": "words", "words": [{"word": "a"}, {"word": "\ud83d"}]}),
            "event.words[1].word",
        ),
        (lambda: encode_sse({"\ud800": 1}), "event (a key)"),
    ],
)
def test_core_sse_refuses_text_utf8_cannot_carry(call: object, field: str) -> None:
    """A lone surrogate is refused with the library's own ValueError naming the field, not a codec error."""
    with pytest.raises(TextEncodingError) as info:
        call()  # type: ignore[operator]
    assert isinstance(info.value, ValueError) and isinstance(info.value, StrandsVoiceError)
    assert not isinstance(info.value, UnicodeError)
    assert info.value.field == field and repr(field) in str(info.value)
    assert "codec" not in str(info.value)


def test_core_sse_decoder_survives_bad_bytes() -> None:
    """Bytes that are not UTF-8 (the bytes of a lone surrogate included) decode with replacement."""
    surrogate_bytes = b"\xed\xa0\x80"  # what a lax encoder makes of "\ud800"
    events = decode_all([b"id: " + surrogate_bytes + b"\ndata: a" + surrogate_bytes + b"\xff\n\n"])
    assert events == [SSEEvent("a\ufffd\ufffd\ufffd\ufffd", "message", "\ufffd\ufffd\ufffd")]


def test_core_sse_crlf_split_across_chunks() -> None:
    # "\r" at the end of one chunk and "\n" at the start of the next are one line break, not two.
    assert decode_all([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]) == [SSEEvent("a\nb")]


def test_core_sse_bounded_buffer() -> None:
    decoder = SSEDecoder(max_event_bytes=1000)
    with pytest.raises(SSEDecodeError) as info:
        for _ in range(100):
            decoder.feed(b"x" * 100)  # a line that never ends
    assert isinstance(info.value, StrandsVoiceError)
    decoder = SSEDecoder(max_event_bytes=1000)
    with pytest.raises(SSEDecodeError):
        for _ in range(100):
            decoder.feed(b"data: " + b"y" * 50 + b"\n")  # an event that never ends
    # Comments and dispatched events do not accumulate.
    decoder = SSEDecoder(max_event_bytes=1000)
    for _ in range(1000):
        decoder.feed(b": keep-alive\n" + encode_sse({"k": "v" * 100}))
    with pytest.raises(SSEDecodeError):
        SSEDecoder(max_event_bytes=10).feed(b"data: " + b"z" * 20 + b"\n\n")


# Only what SSE can carry: UTF-8 text (no lone surrogates; test_core_sse_refuses_text_utf8_cannot_carry
# covers those), event types without line breaks, ids without line breaks or NUL.
utf8_text = st.characters(codec="utf-8")
json_part = st.dictionaries(
    st.text(utf8_text, max_size=5), st.one_of(st.text(utf8_text, max_size=20), st.integers()), max_size=3
)
text_part = st.tuples(
    st.text(utf8_text, max_size=30),
    st.one_of(st.none(), st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=8)),
    st.one_of(st.none(), st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=8)),
)
noise = st.sampled_from([b": comment\r\n", b"retry: 10\n", b"\r\n", b"\n", b"\r"])
parts_strategy = st.lists(st.one_of(json_part, text_part, noise), max_size=12)


def build_stream(parts: list[object]) -> tuple[bytes, list[SSEEvent]]:
    """The stream of these parts and the events a correct decoder must produce from it."""
    out, expected, last_id = [], [], None
    for part in parts:
        if isinstance(part, dict):
            out.append(encode_sse(part))
            expected.append(
                SSEEvent(json.dumps(part, ensure_ascii=False, separators=(",", ":")), "message", last_id)
            )
        elif isinstance(part, tuple):
            data, event, id_ = part
            out.append(encode_sse_event(data, event=event, id=id_))
            last_id = id_ if id_ is not None else last_id
            normalized = data.replace("\r\n", "\n").replace("\r", "\n")
            expected.append(SSEEvent(normalized, event or "message", last_id))
        else:
            assert isinstance(part, bytes)
            out.append(part)
    return b"".join(out), expected


any_text = st.text(st.characters(), max_size=12)  # lone surrogates included


@settings(max_examples=300, deadline=None)
@given(any_text, st.one_of(st.none(), any_text), st.one_of(st.none(), any_text))
# Regression: this id made encode_sse_event raise a raw UnicodeEncodeError (a CI failure once).
@example("", None, "\ud800")
@example("a\udfff", "\ud83d", None)
def test_core_sse_encoder_round_trips_or_refuses(data: str, event: str | None, id: str | None) -> None:
    """Any text either encodes to an event that decodes back, or is refused with a library ValueError."""
    try:
        frame = encode_sse_event(data, event=event, id=id)
    except TextEncodingError as error:
        assert any(_has_surrogate(value) for value in (data, event, id))
        assert error.field in ("data", "event", "id")
        return
    except ValueError as error:
        assert "line break" in str(error)  # event/id with a line break (or NUL): SSE cannot carry them
        return
    normalized = data.replace("\r\n", "\n").replace("\r", "\n")
    [decoded] = decode_all([frame])
    assert decoded.data == normalized and decoded.event == (event or "message")
    assert decoded.id == (id if id is not None else None)
    try:
        json_frame = encode_sse({"text": data})
    except TextEncodingError as error:
        assert _has_surrogate(data) and error.field == "event.text"
    else:
        assert decode_all([json_frame])[0].json() == {"text": data}


def _has_surrogate(value: str | None) -> bool:
    return value is not None and any("\ud800" <= c <= "\udfff" for c in value)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), parts_strategy, st.data())
def test_core_sse_any_chunking_gives_same_events(bom: bool, parts: list[object], data: st.DataObject) -> None:
    body, expected = build_stream(parts)
    stream = (b"\xef\xbb\xbf" if bom else b"") + body
    assert decode_all([stream]) == expected
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=20)))
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    assert decode_all(chunks) == expected
    assert decode_all([bytes([b]) for b in stream]) == expected
