"""The app on bedrock-agentcore's public API only: its JSON guard and SSE framing, without the endpoint."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from agentcore_app.app import create_app
from agentcore_app.scripted import ScriptedModel
from agentcore_app.streaming import JsonBodyGuard, sse_frames
from bedrock_agentcore.runtime import BedrockAgentCoreApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from strands_voice_protocol.events import Event, EventBuilder
from strands_voice_protocol.sse import SSEDecoder

JSON = {"Content-Type": "application/json"}
INVALID_JSON = {
    "type": "error",
    "t_ms": 0,
    "code": "invalid_json",
    "message": "the request body must be a JSON object",
}


def test_app_is_the_runtimes_own_class() -> None:
    # No subclass: nothing of BedrockAgentCoreApp's private API is overridden.
    app = create_app(tts_url="ws://127.0.0.1:9/v1/tts/stream", model=ScriptedModel(text="Hi."))
    assert type(app) is BedrockAgentCoreApp


def _echo_app() -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"parsed": await request.json()})

    return Starlette(
        routes=[Route("/invocations", echo, methods=["POST"]), Route("/other", echo, methods=["POST"])]
    )


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"\xff\xfe\x00{", b'{"prompt": "caf\xe9"}', b"[" * 20_000 + b"]" * 20_000],
)
def test_app_json_guard_refuses_a_body_that_is_not_json(body: bytes) -> None:
    with TestClient(JsonBodyGuard(_echo_app())) as client:
        response = client.post("/invocations", content=body, headers=JSON)
    assert response.status_code == 400
    assert response.json() == INVALID_JSON


def test_app_json_guard_hands_the_same_body_on() -> None:
    payload = {"prompt": "Hello there", "mode": "batch"}
    with TestClient(JsonBodyGuard(_echo_app())) as client:
        response = client.post("/invocations", content=json.dumps(payload).encode(), headers=JSON)
    assert response.status_code == 200 and response.json() == {"parsed": payload}


def test_app_json_guard_leaves_other_routes_alone() -> None:
    with TestClient(JsonBodyGuard(_echo_app()), raise_server_exceptions=False) as client:
        response = client.post("/other", content=b"{not json")
    assert response.status_code == 500  # the route's own failure: the guard did not answer for it


def _decode(frames: list[bytes]) -> list[dict[str, Any]]:
    decoder = SSEDecoder()
    return [json.loads(event.data) for frame in frames for event in decoder.feed(frame)]


def test_app_sse_frames_turn_unsendable_text_into_one_error_and_go_on() -> None:
    builder = EventBuilder()

    async def answer() -> AsyncGenerator[Event, None]:
        yield builder.text_delta(seq=0, text="alpha \ud800")
        yield builder.text_delta(seq=1, text="bravo")

    async def collect() -> list[bytes]:
        return [frame async for frame in sse_frames(answer())]

    events = _decode(asyncio.run(collect()))
    assert [event["type"] for event in events] == ["error", "text_delta"]
    assert events[0]["code"] == "agent_error" and "not valid Unicode" in events[0]["message"]
    assert events[1]["text"] == "bravo"


def test_app_sse_frames_end_a_failing_answer_with_an_internal_error() -> None:
    async def answer() -> AsyncGenerator[Event, None]:
        yield EventBuilder().text_delta(seq=0, text="alpha")
        raise RuntimeError("boom")

    async def collect() -> list[bytes]:
        return [frame async for frame in sse_frames(answer())]

    events = _decode(asyncio.run(collect()))
    assert [event["type"] for event in events] == ["text_delta", "error"]
    assert events[1]["code"] == "internal" and "boom" not in events[1]["message"]


def test_app_sse_frames_close_the_answer_when_closed() -> None:
    closed: list[bool] = []

    async def answer() -> AsyncGenerator[Event, None]:
        try:
            while True:
                yield EventBuilder().text_delta(seq=0, text="more")
        finally:
            closed.append(True)

    async def first_then_close() -> None:
        frames = sse_frames(answer())
        await anext(frames)
        await frames.aclose()

    asyncio.run(first_then_close())
    assert closed == [True]
