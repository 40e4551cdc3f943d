"""The OpenAI-compatible speech API on the real endpoint, driven by the official ``openai`` SDK."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from kokoro_endpoint.serving.app import create_app
from kokoro_endpoint.serving.openai_api import MODELS
from kokoro_endpoint.serving.runner import RunningServer, running_server
from strands_voice_protocol.audio import BYTES_PER_SECOND, MIME_TYPES, decode_audio
from strands_voice_protocol.sse import SSEDecoder

TEXT = "Hello there. This is the second sentence."
#: OpenAI ``response_format`` → the library's name for decoding it.
FORMATS = {"mp3": "mp3", "pcm": "pcm16", "opus": "opus", "aac": "aac", "flac": "flac", "wav": "wav"}


@pytest.fixture(scope="module")
def client(endpoint_server: RunningServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{endpoint_server.base_url}/v1", api_key="unused", max_retries=0) as sdk:
        yield sdk


def plausible_seconds(pcm: bytes, text: str) -> float:
    """The decoded duration, checked against the text: between 30 and 150 ms per character."""
    seconds = len(pcm) / BYTES_PER_SECOND
    assert 0.03 * len(text) <= seconds <= 0.15 * len(text), seconds
    return seconds


@pytest.mark.parametrize("response_format", list(FORMATS))
def test_openai_sdk_streams_speech(client: openai.OpenAI, response_format: str) -> None:
    with client.audio.speech.with_streaming_response.create(
        model="kokoro",
        voice="jm_kumo",
        input=TEXT,
        response_format=response_format,  # type: ignore[arg-type]
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == MIME_TYPES[FORMATS[response_format]]
        assert "content-length" not in response.headers  # streamed (chunked), not buffered whole
        chunks = list(response.iter_bytes())
    audio = b"".join(chunks)
    plausible_seconds(decode_audio(audio, FORMATS[response_format]), TEXT)
    if response_format == "wav":
        assert audio[:4] == b"RIFF"
    if response_format == "flac":
        assert audio[:4] == b"fLaC"


def test_openai_sdk_sse_events_one_per_chunk(client: openai.OpenAI) -> None:
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="jm_kumo", input=TEXT, response_format="mp3", stream_format="sse"
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        decoder = SSEDecoder()
        events = [event.json() for chunk in response.iter_bytes() for event in decoder.feed(chunk)]
        events += [event.json() for event in decoder.flush()]
    deltas, done = events[:-1], events[-1]
    assert done == {
        "type": "speech.audio.done",
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
    }
    assert len(deltas) >= 2 and all(set(event) == {"type", "audio"} for event in deltas)
    assert {event["type"] for event in deltas} == {"speech.audio.delta"}
    pieces = [base64.b64decode(event["audio"]) for event in deltas]
    for piece in pieces:  # whole MP3 frames in every event
        assert decode_audio(piece, "mp3")
    plausible_seconds(decode_audio(b"".join(pieces), "mp3"), TEXT)


def test_openai_sdk_non_streaming_call_and_openai_voice_names(client: openai.OpenAI) -> None:
    # OpenAI's built-in names have no Kokoro voice here: they speak with the endpoint's default voice.
    response = client.audio.speech.create(
        model="gpt-4o-mini-tts", voice="alloy", input="Hi.", response_format="pcm"
    )
    plausible_seconds(response.content, "Hi there")  # "Hi." alone is short: compare with a few chars more
    blob = client.audio.speech.create(
        model="kokoro", voice={"id": "jm_kumo"}, input="Hi.", response_format="pcm", speed=1.5
    )
    assert 0 < len(blob.content) < len(response.content)  # faster speech is shorter


def test_openai_errors_map_to_the_sdk_exceptions(
    client: openai.OpenAI, endpoint_server: RunningServer
) -> None:
    speech = client.audio.speech
    with pytest.raises(openai.BadRequestError) as bad_voice:
        speech.create(model="kokoro", voice="no_such_voice", input=TEXT)
    assert bad_voice.value.code == "unknown_voice" and bad_voice.value.param == "voice"
    assert bad_voice.value.type == "invalid_request_error"
    with pytest.raises(openai.NotFoundError) as bad_model:
        speech.create(model="whisper-1", voice="jm_kumo", input=TEXT)
    assert bad_model.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as too_long:
        speech.create(model="kokoro", voice="jm_kumo", input="word " * 1001)  # the endpoint's 5,000 chars
    assert too_long.value.code == "text_too_long" and too_long.value.param == "input"
    with pytest.raises(openai.BadRequestError, match="speed"):
        speech.create(model="kokoro", voice="jm_kumo", input=TEXT, speed=4.0)
    with pytest.raises(openai.BadRequestError, match="input"):
        speech.create(model="kokoro", voice="jm_kumo", input="   ")
    with pytest.raises(openai.BadRequestError, match="response_format"):
        speech.create(model="kokoro", voice="jm_kumo", input=TEXT, response_format="ogg")  # type: ignore[arg-type]
    with pytest.raises(openai.APIStatusError) as too_big:
        speech.create(model="kokoro", voice="jm_kumo", input="x" * 70_000)
    assert too_big.value.status_code == 413
    # The raw shape, for clients that are not the SDK.
    raw = httpx.post(f"{endpoint_server.base_url}/v1/audio/speech", content=b"[1]", timeout=60)
    assert raw.status_code == 400
    assert set(raw.json()["error"]) == {"message", "type", "param", "code"}


def test_openai_503_while_loading_is_an_internal_server_error(onnx_engine: object) -> None:
    app = create_app(engine=onnx_engine)  # type: ignore[arg-type]
    with running_server(app) as server:
        app.state.endpoint.ready = False  # as while a model loads
        sdk = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="unused", max_retries=0)
        with sdk, pytest.raises(openai.InternalServerError) as loading:
            sdk.audio.speech.create(model="kokoro", voice="jm_kumo", input=TEXT)
        assert loading.value.status_code == 503 and loading.value.code == "model_loading"


def test_openai_models_and_voices(client: openai.OpenAI, endpoint_server: RunningServer) -> None:
    assert [model.id for model in client.models.list()] == list(MODELS)
    listed = httpx.get(f"{endpoint_server.base_url}/v1/audio/voices", timeout=30).json()
    own = httpx.get(f"{endpoint_server.base_url}/voices", timeout=30).json()
    assert listed == own
    assert "jm_kumo" in own["voices"] and own["default"] in own["voices"]
    assert own["voices"] == sorted(own["voices"])


def test_invocations_accepts_aac(endpoint_server: RunningServer) -> None:
    body = json.dumps({"text": TEXT, "format": "aac"}).encode()
    response = httpx.post(f"{endpoint_server.base_url}/invocations", content=body, timeout=240)
    assert response.status_code == 200 and response.headers["content-type"] == "audio/aac"
    plausible_seconds(decode_audio(response.content, "aac"), TEXT)


class GatedEngine:
    """The real engine, held after the first segment of each request until :attr:`gate` opens.

    While it is held the response cannot have ended, so a free slot then is a slot given back early.
    """

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.name = engine.name
        self.sample_rate = engine.sample_rate
        self.default_voice = engine.default_voice
        self.voices = engine.voices
        self.gate = threading.Event()

    def warm_up(self) -> None:
        self._engine.warm_up()

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[Any]:
        for index, segment in enumerate(self._engine.synthesize(text, voice, speed)):
            if index == 1:
                self.gate.wait(60)  # bounded: a failing test must not hang the worker
            yield segment


@pytest.mark.parametrize("stream_format", ["sse", "audio"])
def test_openai_client_leaving_mid_stream_frees_the_slot(onnx_engine: object, stream_format: str) -> None:
    engine = GatedEngine(onnx_engine)
    app = create_app(engine=engine)  # type: ignore[arg-type]
    capacity = app.state.endpoint.capacity
    long_text = " ".join(f"This is sentence number {n} of a long answer." for n in range(40))
    try:
        with running_server(app) as server:
            sdk = openai.OpenAI(base_url=f"{server.base_url}/v1", api_key="unused", max_retries=0)
            with (
                sdk,
                sdk.audio.speech.with_streaming_response.create(
                    model="kokoro",
                    voice="jm_kumo",
                    input=long_text,
                    response_format="pcm",
                    stream_format=stream_format,
                ) as response,
            ):
                # The iterator is kept: `next(response.iter_bytes())` alone dropped it at once, and a
                # dropped iterator closes the response, so the client had already left when the slot was
                # seen free (the cause of the old flaky check; no real client is cut short).
                chunks = response.iter_bytes()
                assert next(chunks)  # the first segment's audio
                # Mid-stream: synthesis is held, so the response cannot have ended; the slot is held.
                assert capacity.in_use == 1
                chunks.close()  # then the client leaves
            engine.gate.set()
            deadline = time.monotonic() + 120
            while capacity.in_use:  # the server notices the disconnect at its next write
                assert time.monotonic() < deadline, "the slot was never given back"
                time.sleep(0.05)
    finally:
        engine.gate.set()
