"""``POST /invocations`` on the real server: binary and SSE transports, every format, input errors."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from kokoro_endpoint.serving.runner import RunningServer
from strands_voice_protocol.audio import MIME_TYPES, decode_audio
from strands_voice_protocol.sse import SSEDecoder

TEXT = "Hello there."


def _post(server: RunningServer, body: Any, **kwargs: Any) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{server.base_url}/invocations", content=content, timeout=240, **kwargs)


def test_binary_pcm16_streams_audio(endpoint_server: RunningServer) -> None:
    url = f"{endpoint_server.base_url}/invocations"
    with httpx.stream("POST", url, json={"text": TEXT, "request_id": "h1"}, timeout=240) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith(MIME_TYPES["pcm16"].split(";")[0])
        assert response.headers["x-request-id"] == "h1"
        audio = b"".join(response.iter_bytes())
    assert len(audio) > 24_000 and len(audio) % 2 == 0  # over half a second of speech


@pytest.mark.parametrize("audio_format", ["wav", "mp3", "opus"])
def test_binary_encoded_formats_decode(endpoint_server: RunningServer, audio_format: str) -> None:
    response = _post(endpoint_server, {"text": TEXT, "format": audio_format})
    assert response.status_code == 200
    assert response.headers["content-type"] == MIME_TYPES[audio_format]
    if audio_format == "wav":
        assert response.content[:4] == b"RIFF" and response.content[8:12] == b"WAVE"
    pcm = decode_audio(response.content, audio_format)
    assert len(pcm) / 48_000 > 0.5


@pytest.mark.parametrize("audio_format", ["pcm16", "mp3"])
def test_sse_transport_events(endpoint_server: RunningServer, audio_format: str) -> None:
    body = {"text": TEXT, "transport": "sse", "format": audio_format, "request_id": "s"}
    response = _post(endpoint_server, body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    decoder = SSEDecoder()
    events = [event.json() for event in decoder.feed(response.content) + decoder.flush()]
    assert events[0]["type"] == "audio_start"
    assert events[0]["format"] == audio_format and events[0]["sample_rate"] == 24000
    chunks = events[1:-1]
    assert chunks and all(c["type"] == "audio_chunk" and c["sentence"] == 0 for c in chunks)
    assert [c["seq"] for c in chunks] == list(range(len(chunks)))
    data = [base64.b64decode(c["data"]) for c in chunks]
    for piece in data:  # each chunk decodes on its own: no codec frame is split
        assert decode_audio(piece, audio_format) or audio_format != "pcm16"
    done = events[-1]
    assert done["type"] == "synthesis_complete" and done["request_id"] == "s"
    assert done["audio_bytes"] == sum(len(piece) for piece in data)
    if audio_format == "pcm16":
        assert done["total_duration_s"] == done["audio_bytes"] / 48_000


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{nope", 400, "invalid_json"),
        (b"[1]", 400, "invalid_json"),
        ({"voice": "jm_kumo"}, 400, "invalid_request"),
        ({"type": "cancel"}, 400, "invalid_request"),
        ({"text": "Hi.", "voice": "af_nobody"}, 400, "unknown_voice"),
        ({"text": "Hi.", "speed": 9}, 400, "invalid_request"),
        ({"text": "Hi.", "format": "flac"}, 400, "invalid_request"),
        ({"text": "Hi.", "transport": "pigeon"}, 400, "invalid_request"),
        ({"text": "x" * 5001}, 400, "text_too_long"),
        ({"text": "x" * 70_000}, 413, "invalid_request"),
    ],
)
def test_bad_requests_get_json_errors(
    endpoint_server: RunningServer, body: Any, status: int, code: str
) -> None:
    response = _post(endpoint_server, body)
    assert response.status_code == status
    error = response.json()
    assert error["type"] == "error" and error["code"] == code
    assert "Traceback" not in error["message"] and "/" not in error["message"]
