"""The Twilio Media Streams codec (sans-I/O): every event in, every protocol error with its close code and
reason, the frames out, and telling a Twilio stream's first frame from a Leg 3 ``start``."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from strands_voice_protocol.telephony import twilio
from strands_voice_protocol.telephony.twilio import (
    CLOSE_PROTOCOL,
    CLOSE_UNSUPPORTED,
    Connected,
    Dtmf,
    Mark,
    Media,
    MediaFormat,
    Started,
    Stopped,
    TwilioProtocolError,
    TwilioStream,
)

SID = "MZ18ad3ab5a668481ce02b83e7395059f0"


def start(**start_fields: Any) -> str:
    fields = {
        "accountSid": "AC1",
        "streamSid": SID,
        "callSid": "CA1",
        "tracks": ["inbound"],
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
        "customParameters": {"session_id": "s-1"},
        **start_fields,
    }
    return json.dumps({"event": "start", "sequenceNumber": "1", "start": fields, "streamSid": SID})


def media(payload: bytes | str) -> str:
    text = payload if isinstance(payload, str) else base64.b64encode(payload).decode()
    return json.dumps({"event": "media", "streamSid": SID, "media": {"track": "inbound", "payload": text}})


def started() -> TwilioStream:
    stream = TwilioStream()
    stream.receive(start())
    return stream


def test_every_event_in_is_typed() -> None:
    stream = TwilioStream()
    assert stream.receive('{"event": "connected", "protocol": "Call", "version": "1.0.0"}') == Connected()
    begun = stream.receive(start())
    assert begun == Started(SID, "CA1", {"session_id": "s-1"}, MediaFormat("audio/x-mulaw", 8000, 1))
    assert stream.started == begun
    assert stream.receive(media(b"\xff" * 160)) == Media(b"\xff" * 160)
    assert stream.receive(json.dumps({"event": "mark", "streamSid": SID, "mark": {"name": "a.0.0"}})) == Mark(
        "a.0.0"
    )
    dtmf = {"event": "dtmf", "streamSid": SID, "dtmf": {"track": "inbound_track", "digit": "5"}}
    assert stream.receive(json.dumps(dtmf)) == Dtmf("5")
    assert (
        stream.receive(json.dumps({"event": "stop", "streamSid": SID, "stop": {"callSid": "CA1"}}))
        == Stopped()
    )


def test_a_start_without_parameters_or_format_takes_twilio_s_only_format() -> None:
    fields = json.loads(start())
    del fields["start"]["customParameters"], fields["start"]["mediaFormat"]
    begun = TwilioStream().receive(json.dumps(fields))
    assert isinstance(begun, Started) and begun.custom_parameters == {}
    assert begun.media_format == MediaFormat("audio/x-mulaw", 8000, 1)


@pytest.mark.parametrize(
    ("frame", "code", "reason"),
    [
        ("not json", CLOSE_UNSUPPORTED, "JSON"),
        ("[1, 2]", CLOSE_UNSUPPORTED, "JSON"),
        ('{"event": "dance"}', CLOSE_PROTOCOL, "unknown event 'dance'"),
        ('{"type": "start"}', CLOSE_PROTOCOL, "needs an 'event'"),
        (media(b"\xff" * 160), CLOSE_PROTOCOL, "'media' before 'start'"),
        ('{"event": "mark", "mark": {"name": "x"}}', CLOSE_PROTOCOL, "'mark' before 'start'"),
        ('{"event": "stop"}', CLOSE_PROTOCOL, "'stop' before 'start'"),
        (
            start(mediaFormat={"encoding": "audio/l16", "sampleRate": 16000, "channels": 1}),
            CLOSE_UNSUPPORTED,
            "x-mulaw",
        ),
        (
            start(mediaFormat={"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 2}),
            CLOSE_UNSUPPORTED,
            "mono",
        ),
        (start(customParameters={"session_id": 5}), CLOSE_PROTOCOL, "customParameters"),
        (start(callSid=""), CLOSE_PROTOCOL, "callSid"),
        (json.dumps({"event": "start", "start": "x"}), CLOSE_PROTOCOL, "'start' must be an object"),
    ],
)
def test_a_frame_that_breaks_the_protocol_before_start_is_a_close_with_a_reason(
    frame: str, code: int, reason: str
) -> None:
    with pytest.raises(TwilioProtocolError) as raised:
        TwilioStream().receive(frame)
    assert raised.value.code == code and reason in raised.value.reason


@pytest.mark.parametrize(
    ("frame", "code", "reason"),
    [
        (media(b"\xff" * 8001), CLOSE_PROTOCOL, "one second"),
        (media("A" * 20_000), CLOSE_PROTOCOL, "one second"),  # refused before it is decoded
        (media("not base64!"), CLOSE_UNSUPPORTED, "base64"),
        (json.dumps({"event": "media", "media": {}}), CLOSE_PROTOCOL, "payload"),
        (json.dumps({"event": "media"}), CLOSE_PROTOCOL, "'media' must be an object"),
        (json.dumps({"event": "mark", "mark": {"name": ""}}), CLOSE_PROTOCOL, "mark.name"),
        (json.dumps({"event": "dtmf", "dtmf": {}}), CLOSE_PROTOCOL, "dtmf.digit"),
        (start(), CLOSE_PROTOCOL, "a second 'start'"),
    ],
)
def test_a_frame_that_breaks_the_protocol_after_start_is_a_close_with_a_reason(
    frame: str, code: int, reason: str
) -> None:
    with pytest.raises(TwilioProtocolError) as raised:
        started().receive(frame)
    assert raised.value.code == code and reason in raised.value.reason


def test_one_second_of_audio_is_taken_and_a_binary_frame_is_unsupported() -> None:
    assert started().receive(media(b"\x7f" * 8000)) == Media(b"\x7f" * 8000)
    error = TwilioStream.binary()
    assert error.code == CLOSE_UNSUPPORTED and "text frames" in error.reason


def test_a_close_reason_fits_a_close_frame() -> None:
    error = TwilioProtocolError(CLOSE_PROTOCOL, "é" * 200)
    assert len(error.reason.encode()) <= 123 and error.reason == "é" * 61


def test_frames_out_name_the_stream() -> None:
    assert json.loads(twilio.media(SID, b"\x00\xff")) == {
        "event": "media",
        "streamSid": SID,
        "media": {"payload": base64.b64encode(b"\x00\xff").decode()},
    }
    assert json.loads(twilio.mark(SID, "r.1.0")) == {
        "event": "mark",
        "streamSid": SID,
        "mark": {"name": "r.1.0"},
    }
    assert json.loads(twilio.clear(SID)) == {"event": "clear", "streamSid": SID}


@pytest.mark.parametrize(
    ("frame", "twilio_stream"),
    [
        ('{"event": "connected", "protocol": "Call", "version": "1.0.0"}', True),
        (start(), True),
        ('{"type": "start", "format": "pcm16"}', False),
        ('{"type": "start", "event": "start"}', False),
        ('{"event": "media"}', False),
        ("not json", False),
        ('["event"]', False),
    ],
)
def test_a_twilio_stream_is_told_by_its_first_frame(frame: str, twilio_stream: bool) -> None:
    assert twilio.is_media_stream_frame(frame) is twilio_stream
