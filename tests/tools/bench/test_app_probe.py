"""The Leg 3 timing client, against a tiny inline SSE app on 127.0.0.1:0 that records what it received."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from kokoro_endpoint.serving.runner import RunningServer, running_server
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.leg3_client import ModeResult
from strands_voice_tools.bench.app_probe import run_voice_request

PCM = b"\x01\x00" * 24_000  # 1 s of pcm16 at 24 kHz


def _events() -> list[dict[str, Any]]:
    data = base64.b64encode(PCM).decode("ascii")
    return [
        {"type": "agent_start", "t_ms": 0.0, "mode": "bidi", "request_id": "r1"},
        {"type": "text_delta", "t_ms": 10.0, "seq": 0, "text": "Hello **there**, "},
        {"type": "text_delta", "t_ms": 20.0, "seq": 1, "text": "friend. "},
        {"type": "audio_start", "t_ms": 30.0, "format": "pcm16", "sample_rate": 24000, "channels": 1},
        {"type": "audio_chunk", "t_ms": 200.0, "seq": 0, "sentence": 0, "data": data},
        {
            "type": "sentence_complete",
            "t_ms": 210.0,
            "sentence": 0,
            "text": "Hello there, friend.",
            "duration_s": 1.0,
        },
        {"type": "audio_end", "t_ms": 220.0, "chunks": 1, "duration_s": 1.0},
        {"type": "agent_end", "t_ms": 230.0, "ttfa_ms": 200.0, "text_ms": 20.0, "audio_ms": 200.0},
    ]


@pytest.fixture
def sse_app() -> Iterator[tuple[RunningServer, list[Any]]]:
    received: list[Any] = []

    async def invocations(request: Request) -> Response:
        body = await request.json()
        received.append(body)
        if body.get("prompt") == "bad":
            return JSONResponse({"type": "error", "t_ms": 0, "code": "invalid_request", "message": "no"}, 400)

        async def stream() -> AsyncIterator[bytes]:
            for event in _events():
                frame = f"data: {json.dumps(event)}\n\n".encode()
                if event["type"] == "audio_chunk":
                    await asyncio.sleep(0.2)
                    # Split one event across transport chunks: the client must buffer, not trust chunks.
                    yield frame[:100]
                    await asyncio.sleep(0.01)
                    yield frame[100:]
                else:
                    yield frame

        return StreamingResponse(stream(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/invocations", invocations, methods=["POST"])])
    with running_server(app) as server:
        yield server, received


async def _run(url: str, prompt: str) -> ModeResult:
    async with httpx.AsyncClient() as client:
        return await run_voice_request(client, url, prompt, mode="bidi", audio_format="pcm16")


def test_run_voice_request_times_events_and_counts_leg3_bytes(
    sse_app: tuple[RunningServer, list[Any]],
) -> None:
    server, received = sse_app
    run = asyncio.run(_run(server.base_url, "Hi"))
    assert received == [{"prompt": "Hi", "mode": "bidi", "format": "pcm16"}]
    assert [delta.text for delta in run.texts] == ["Hello **there**, ", "friend. "]
    assert [delta.t_ms for delta in run.texts] == [10.0, 20.0]
    assert len(run.audio) == 1
    chunk = run.audio[0]
    assert chunk.audio_bytes == len(PCM)
    assert chunk.sentence == 0 and chunk.t_ms == 200.0
    audio_event = next(event for event in _events() if event["type"] == "audio_chunk")
    assert chunk.wire_bytes == len(f"data: {json.dumps(audio_event)}\n\n".encode())
    assert run.audio_wire_bytes == chunk.wire_bytes
    assert run.response_bytes == sum(len(f"data: {json.dumps(event)}\n\n".encode()) for event in _events())
    assert run.first_audio_s is not None and run.first_audio_s >= 0.2  # the audio event is sent 0.2 s in
    assert run.texts[0].arrival_s < run.first_audio_s
    assert run.server_ttfa_ms == 200.0
    assert run.sentences == {0: ("Hello there, friend.", 1.0)}
    assert run.audio_end is not None and run.audio_end["duration_s"] == 1.0
    assert run.agent_end is not None and run.agent_end["ttfa_ms"] == 200.0
    assert run.errors == []


def test_run_voice_request_reports_a_refused_request(sse_app: tuple[RunningServer, list[Any]]) -> None:
    server, _received = sse_app
    with pytest.raises(StrandsVoiceError, match="HTTP 400"):
        asyncio.run(_run(server.base_url, "bad"))
