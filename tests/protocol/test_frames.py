"""Leg 1 frame codec: every PROTOCOL.md row round-trips, invalid input maps to the right error code, the
whole-chunk JSON rule, and decoding arbitrary input never raises anything but FrameDecodeError."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strands_voice_protocol.errors import FRAME_ERROR_CODES, FrameDecodeError, TextEncodingError
from strands_voice_protocol.frames import (
    Cancel,
    ClientMessage,
    Close,
    ErrorFrame,
    Keepalive,
    ServerMessage,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    WordTimestamps,
    WordTiming,
    decode_client_message,
    decode_server_control,
    decode_server_frame,
    encode_client_message,
    encode_server_message,
    is_control_frame,
)

CLIENT_MESSAGES: list[tuple[ClientMessage, dict[str, Any]]] = [
    (
        Synthesize("Hello there.", voice="af_heart", speed=1.25, request_id="r1"),
        {
            "type": "synthesize",
            "text": "Hello there.",
            "voice": "af_heart",
            "speed": 1.25,
            "request_id": "r1",
        },
    ),
    (Synthesize('你好 ✓ "quoted"\n'), {"type": "synthesize", "text": '你好 ✓ "quoted"\n'}),
    (
        Synthesize("Resume.", request_id="r1~1", skip_samples=12_345),
        {"type": "synthesize", "text": "Resume.", "request_id": "r1~1", "skip_samples": 12_345},
    ),
    (
        Synthesize("Hi.", normalize=False, timestamps=True, lang="a", lexicon={"Kokoro": "kˈOkəɹO"}),
        {
            "type": "synthesize",
            "text": "Hi.",
            "normalize": False,
            "timestamps": True,
            "lang": "a",
            "lexicon": {"Kokoro": "kˈOkəɹO"},
        },
    ),
    (Keepalive(), {"type": "keepalive"}),
    (Cancel("r1"), {"type": "cancel", "request_id": "r1"}),
    (Cancel(), {"type": "cancel"}),
    (Close(), {"type": "close"}),
]

SERVER_MESSAGES: list[tuple[ServerMessage, dict[str, Any]]] = [
    (
        SynthesisStart("r1"),
        {
            "type": "synthesis_start",
            "request_id": "r1",
            "format": "pcm16",
            "sample_rate": 24000,
            "channels": 1,
        },
    ),
    (
        SynthesisStart("r2", format="opus"),
        {
            "type": "synthesis_start",
            "request_id": "r2",
            "format": "opus",
            "sample_rate": 24000,
            "channels": 1,
        },
    ),
    (
        SynthesisStart("r1~1", skip_samples=0),
        {
            "type": "synthesis_start",
            "request_id": "r1~1",
            "format": "pcm16",
            "sample_rate": 24000,
            "channels": 1,
            "skip_samples": 0,
        },
    ),
    (
        SynthesisComplete("r1", audio_bytes=96000, total_duration_s=2.0, elapsed_s=0.61),
        {
            "type": "synthesis_complete",
            "request_id": "r1",
            "audio_bytes": 96000,
            "total_duration_s": 2.0,
            "elapsed_s": 0.61,
        },
    ),
    (SynthesisCancelled("r1"), {"type": "synthesis_cancelled", "request_id": "r1"}),
    (
        WordTimestamps("r1", (WordTiming("Hi", 0.0, 0.25, 0, 2),)),
        {
            "type": "word_timestamps",
            "request_id": "r1",
            "words": [{"word": "Hi", "start_s": 0.0, "end_s": 0.25, "char_start": 0, "char_end": 2}],
        },
    ),
    (
        ErrorFrame("text_too_long", "The text is too long.", "r3"),
        {"type": "error", "code": "text_too_long", "message": "The text is too long.", "request_id": "r3"},
    ),
    (ErrorFrame("invalid_json", "Bad."), {"type": "error", "code": "invalid_json", "message": "Bad."}),
]


@pytest.mark.parametrize(("message", "wire"), CLIENT_MESSAGES)
def test_core_frames_client_rows_round_trip(message: ClientMessage, wire: dict[str, Any]) -> None:
    encoded = encode_client_message(message)
    assert json.loads(encoded) == wire
    assert decode_client_message(encoded) == message
    assert decode_client_message(encoded.encode("utf-8")) == message  # SageMaker BINARY parts


@pytest.mark.parametrize(("message", "wire"), SERVER_MESSAGES)
def test_core_frames_server_rows_round_trip(message: ServerMessage, wire: dict[str, Any]) -> None:
    encoded = encode_server_message(message)
    assert json.loads(encoded) == wire
    assert decode_server_control(encoded) == message
    assert decode_server_frame(encoded) == message
    assert decode_server_frame(encoded.encode(), is_text=True) == message
    assert decode_server_frame(encoded.encode()) == message  # whole-chunk JSON rule


def test_core_frames_error_codes_listed() -> None:
    assert {
        "invalid_json",
        "invalid_request",
        "text_too_long",
        "unknown_voice",
        "unsupported_language",
        "busy",
        "internal",
    } == FRAME_ERROR_CODES


def test_core_frames_public_dialect_without_type() -> None:
    # Outside clients of the public Kokoro-on-SageMaker dialect send {text, voice, speed, request_id}.
    assert decode_client_message(b'{"text": "Hi.", "voice": "af_bella", "speed": 1, "request_id": "x"}') == (
        Synthesize("Hi.", voice="af_bella", speed=1.0, request_id="x")
    )


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\xff\xfe{}", "invalid_json"),
        (b"not json", "invalid_json"),
        ("", "invalid_json"),
        ('{"type": "synthesize", "text": "a"', "invalid_json"),
        ("[1, 2]", "invalid_json"),
        ('"a string"', "invalid_json"),
        ("null", "invalid_json"),
        ("[" * 100_000 + "]" * 100_000, "invalid_json"),
        ("{}", "invalid_request"),
        ('{"type": "synthesize"}', "invalid_request"),
        ('{"type": "synthesize", "text": 5}', "invalid_request"),
        ('{"type": "synthesize", "text": "   "}', "invalid_request"),
        ('{"text": ""}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "speed": "fast"}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "speed": true}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "speed": NaN}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "speed": Infinity}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "voice": 3}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "request_id": 3}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "skip_samples": -1}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "skip_samples": 1.5}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "skip_samples": true}', "invalid_request"),
        ('{"type": "synthesize", "text": "a", "skip_samples": "9"}', "invalid_request"),
        ('{"type": "cancel", "request_id": ["x"]}', "invalid_request"),
        ('{"type": "dance"}', "invalid_request"),
        ('{"type": 7}', "invalid_request"),
        ('{"type": null}', "invalid_request"),
    ],
)
def test_core_frames_invalid_client_frames(frame: str | bytes, code: str) -> None:
    with pytest.raises(FrameDecodeError) as info:
        decode_client_message(frame)
    assert info.value.code == code
    # Written for a person: no exception text or internals.
    assert "Traceback" not in info.value.message and "Error" not in info.value.message


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "synthesis_start"}',
        '{"type": "synthesis_start", "request_id": null}',
        '{"type": "synthesis_start", "request_id": "a", "sample_rate": Infinity}',
        '{"type": "synthesis_start", "request_id": "a", "sample_rate": 24000.5}',
        '{"type": "synthesis_start", "request_id": "a", "channels": "1"}',
        '{"type": "synthesis_start", "request_id": "a", "format": 1}',
        '{"type": "synthesis_complete", "request_id": "a", "audio_bytes": true, "total_duration_s": 1}',
        '{"type": "synthesis_complete", "request_id": "a", "audio_bytes": 1, "total_duration_s": NaN}',
        '{"type": "synthesis_complete", "request_id": "a", "audio_bytes": -1, "total_duration_s": 1}',
        '{"type": "synthesis_cancelled"}',
        '{"type": "error", "code": 5, "message": "x"}',
        '{"type": "error", "code": "busy", "message": "x", "request_id": 9}',
        '{"type": "audio"}',
        "{}",
    ],
)
def test_core_frames_invalid_server_frames(frame: str) -> None:
    with pytest.raises(FrameDecodeError) as info:
        decode_server_control(frame)
    assert info.value.code == "invalid_request"


def test_core_frames_server_fields_an_older_endpoint_leaves_out() -> None:
    complete = decode_server_control('{"type": "synthesis_complete", "request_id": "r", "audio_bytes": 2, '
                                     '"total_duration_s": 0.5}')  # fmt: skip
    assert complete == SynthesisComplete("r", 2, 0.5, elapsed_s=0.0)
    assert decode_server_control('{"type": "error"}') == ErrorFrame("internal", "")
    assert decode_server_control('{"type": "error", "request_id": null, "code": "busy", "message": "m"}') == (
        ErrorFrame("busy", "m")
    )


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "word_timestamps", "request_id": "r", "words": [1]}',
        '{"type": "word_timestamps", "request_id": "r", "words": [{"word": "a", "start_s": 0}]}',
        '{"type": "word_timestamps", "request_id": "r"}',
        '{"type": "synthesis_complete", "request_id": "r", "audio_bytes": 1'
        + "0" * 400
        + ', "total_duration_s": -1}',
        '{"type": "synthesis_complete", "request_id": "r", "audio_bytes": 2, "total_duration_s": 1e999}',
        '{"type": ["synthesis_start"]}',
    ],
)
def test_core_frames_invalid_server_fields(frame: str) -> None:
    with pytest.raises(FrameDecodeError) as info:
        decode_server_control(frame)
    assert info.value.code == "invalid_request"


def test_core_frames_integers_too_large_for_a_float_are_invalid_not_crashes() -> None:
    huge = "1" + "0" * 400
    with pytest.raises(FrameDecodeError) as info:
        decode_client_message('{"text": "a", "speed": ' + huge + "}")
    assert info.value.code == "invalid_request"
    assert decode_client_message('{"text": "a", "skip_samples": ' + huge + "}").skip_samples == int(huge)


def test_core_frames_whole_chunk_json_rule() -> None:
    start = encode_server_message(SynthesisStart("r")).encode()
    assert is_control_frame(start) and is_control_frame(b"  \n" + start + b"\n")
    # PCM that happens to begin with "{" (0x7b) stays audio.
    pcm = b"{\x00\x10\xff" * 100
    assert not is_control_frame(pcm)
    assert decode_server_frame(pcm) == pcm
    assert not is_control_frame(start + b"\x00\x00")  # JSON followed by audio bytes: not a whole chunk
    assert not is_control_frame(b'{"a": 1')
    assert not is_control_frame(b"[1]") and not is_control_frame(b"") and not is_control_frame(b"12")
    # Frame kinds from the transport win over the content.
    assert decode_server_frame(start, is_text=False) == start
    with pytest.raises(FrameDecodeError):
        decode_server_frame(pcm, is_text=True)


def test_core_frames_encode_rejects_non_messages() -> None:
    with pytest.raises(TypeError):
        encode_client_message(SynthesisStart("x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        encode_server_message(Close())  # type: ignore[arg-type]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
keys = st.sampled_from(
    ["type", "text", "voice", "speed", "request_id", "format", "sample_rate", "channels", "audio_bytes",
     "total_duration_s", "elapsed_s", "code", "message", "words", "skip_samples", "lexicon", "normalize",
     "timestamps", "lang"]
)  # fmt: skip
types = st.sampled_from(
    ["synthesize", "cancel", "close", "keepalive", "synthesis_start", "synthesis_complete",
     "synthesis_cancelled", "word_timestamps", "error"]
)  # fmt: skip
message_like = st.builds(
    lambda kind, fields: json.dumps({"type": kind, **fields}, allow_nan=True),
    types | json_values,
    st.dictionaries(keys, json_values, max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=200), message_like, message_like.map(str.encode)))
def test_core_frames_decode_never_raises_other_errors(data: str | bytes) -> None:
    for decode in (decode_client_message, decode_server_control):
        try:
            decode(data)
        except FrameDecodeError as error:
            assert error.code in ("invalid_json", "invalid_request")
    try:
        result = decode_server_frame(data)
    except FrameDecodeError:
        assert isinstance(data, str) or is_control_frame(data)
    else:
        if isinstance(data, bytes) and not is_control_frame(data):
            assert result == data  # audio passes through untouched


@settings(max_examples=200, deadline=None)
@given(
    st.text(min_size=1, max_size=50).filter(str.strip),
    st.none() | st.text(max_size=10),
    st.none() | st.floats(0.25, 4.0),
    # A request id is visible ASCII (test_request_ids.py: any other is refused).
    st.none() | st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=10),
)
def test_core_frames_synthesize_round_trip_property(
    text: str, voice: str | None, speed: float | None, request_id: str | None
) -> None:
    message = Synthesize(text, voice=voice, speed=speed, request_id=request_id)
    assert decode_client_message(encode_client_message(message)) == message


@pytest.mark.parametrize(
    ("encode", "field"),
    [
        (lambda: encode_client_message(Synthesize("say \ud800 this")), "frame.text"),
        (lambda: encode_client_message(Synthesize("ok", voice="\udfff")), "frame.voice"),
        (lambda: encode_client_message(Cancel(request_id="\ud83d")), "frame.request_id"),
        (lambda: encode_server_message(ErrorFrame("internal", "bad \udc00 text")), "frame.message"),
    ],
)
def test_core_frames_refuse_text_utf8_cannot_carry(encode: Any, field: str) -> None:
    """A lone surrogate never reaches the transport as a raw UnicodeEncodeError: a clear, named error."""
    with pytest.raises(TextEncodingError) as info:
        encode()
    assert isinstance(info.value, ValueError) and not isinstance(info.value, UnicodeError)
    assert info.value.field == field and repr(field) in str(info.value)
