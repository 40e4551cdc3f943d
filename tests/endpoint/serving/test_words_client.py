"""The library side of word timestamps: frame codec, the session's ``WordsReceived``, Leg 3 ``words``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kokoro_endpoint.serving.runner import RunningServer
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.events import EVENT_TYPES, EventBuilder
from strands_voice_protocol.frames import (
    Synthesize,
    WordTimestamps,
    WordTiming,
    decode_client_message,
    decode_server_frame,
    encode_client_message,
    encode_server_message,
)

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import AudioChunk, RequestCompleted, WordsReceived
from strands_voice.transports._websocket import WebSocketTransport

WORDS = (WordTiming("e.g.", 0.35, 0.9, 10, 14), WordTiming("$1.5M", 1.0, 2.25, 15, 20))


def test_word_timestamps_frames_round_trip() -> None:
    frame = WordTimestamps("r1", WORDS)
    text = encode_server_message(frame)
    assert '"type":"word_timestamps"' in text
    assert decode_server_frame(text) == frame
    assert decode_server_frame(text.encode(), is_text=None) == frame  # whole-chunk JSON rule


def test_synthesize_carries_normalize_and_timestamps() -> None:
    message = Synthesize("Hi.", request_id="r", normalize=False, timestamps=True)
    assert decode_client_message(encode_client_message(message)) == message
    assert "normalize" not in encode_client_message(Synthesize("Hi."))
    with pytest.raises(FrameDecodeError):
        decode_client_message('{"text": "Hi.", "timestamps": 1}')


def test_a_bad_word_list_is_refused() -> None:
    with pytest.raises(FrameDecodeError):
        decode_server_frame('{"type": "word_timestamps", "request_id": "r", "words": [{"word": "x"}]}')


def test_the_leg3_words_event() -> None:
    event = EventBuilder(clock=lambda: 0.0).words(sentence=2, words=WORDS)
    assert event["type"] == "words" and event["type"] in EVENT_TYPES
    assert event["sentence"] == 2 and event["t_ms"] == 0.0
    assert event["words"][1] == {
        "word": "$1.5M",
        "start_s": 1.0,
        "end_s": 2.25,
        "char_start": 15,
        "char_end": 20,
    }


def test_the_session_reports_words_before_their_audio(endpoint_server: RunningServer) -> None:
    text = "Hello there, e.g. you. See you at 5 p.m. today."

    async def run() -> list[Any]:
        async with TTSSession(WebSocketTransport(endpoint_server.ws_url), silence_timeout=120) as session:
            await session.synthesize(text, request_id="w1", timestamps=True)
            await session.synthesize("No words for this one.", request_id="w2")
            await session.finish()
            return [event async for event in session]

    events = asyncio.run(asyncio.wait_for(run(), 240))
    words_events = [e for e in events if isinstance(e, WordsReceived)]
    assert words_events and all(e.request_id == "w1" for e in words_events)
    first_words = events.index(words_events[0])
    first_audio = next(i for i, e in enumerate(events) if isinstance(e, AudioChunk))
    assert first_words < first_audio
    spoken = [w.word for e in words_events for w in e.words]
    assert spoken == ["Hello", "there", "e.g.", "you", "See", "you", "at", "5", "p.m.", "today"]
    assert [e.request_id for e in events if isinstance(e, RequestCompleted)] == ["w1", "w2"]
