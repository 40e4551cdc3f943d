"""Bad input at every door of the real endpoint (WebSocket and POST) and of the example app's payload.

Each bad input gets its documented error code, the session (or server) keeps serving, and no answer
carries exception text, a trace or a path. tests/endpoint covers the everyday mistakes; this file adds
oversized, wrongly encoded, deeply nested, absurd-number and unspeakable input, the capacity limits, and
the POST route.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from support.reliability import (
    assert_no_leak,
    check_complete,
    group_replies,
    read_until,
    synthesize_frame,
    wait_for,
)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

LIMIT = 64 * 1024  # Settings.max_frame_bytes default
TEXT_LIMIT = 5000  # Settings.max_text_chars default

# (frame, code): each answered by one error frame, in order, on one session.
HOSTILE_FRAMES: list[tuple[str | bytes, str]] = [
    (b"\xc3\x28\xa0\xa1", "invalid_json"),  # invalid UTF-8 in a binary frame
    (b'{"text": "caf\xe9"}', "invalid_json"),  # Latin-1, not UTF-8
    ('{"text": "a"}\x00', "invalid_json"),
    ("[" * 20_000 + "]" * 20_000, "invalid_json"),  # deep nesting under the size limit
    ('{"text": ' * 5_000 + '"a"' + "}" * 5_000, "invalid_json"),  # nested objects, too deep to parse
    ("x" * (LIMIT + 1), "invalid_request"),  # text frame over max_frame_bytes
    (b"\x00" * (LIMIT + 1), "invalid_request"),  # binary frame over max_frame_bytes
    (
        json.dumps({"type": "synthesize", "text": "a" * (TEXT_LIMIT + 1), "request_id": "long"}),
        "text_too_long",
    ),
    ('{"type": "synthesize", "text": "a", "speed": 1e400}', "invalid_request"),  # parses to inf
    ('{"type": "synthesize", "text": "a", "speed": -1}', "invalid_request"),
    ('{"type": "synthesize", "text": "a", "speed": 99999999999999999999999}', "invalid_request"),
    ('{"type": "synthesize", "text": ["a"]}', "invalid_request"),
    ('{"type": "synthesize", "text": {"a": 1}}', "invalid_request"),
    ('{"type": "synthesize", "text": "a", "voice": "../../etc/passwd"}', "unknown_voice"),
    ('{"type": ["synthesize"], "text": "a"}', "invalid_request"),
    ('{"type": "cancel", "request_id": 5}', "invalid_request"),
]


def _bad_frames_then_valid(url: str) -> tuple[list[Any], list[str]]:
    async def run() -> tuple[list[Any], list[str]]:
        async with connect(url, max_size=2**22) as ws:
            expected = []
            for frame, code in HOSTILE_FRAMES:
                await ws.send(frame)
                expected.append(code)
            await ws.send(json.dumps({"type": "cancel", "request_id": "nobody"}))  # unknown id: no answer
            await ws.send(synthesize_frame("Fine.", "ok"))
            frames = await read_until(ws, len(expected) + 1, limit_s=240)
        return frames, expected

    return asyncio.run(run())


def test_reliability_input_ws_hostile_frames_get_errors_and_session_serves(reliability_endpoint: Any) -> None:
    frames, expected = _bad_frames_then_valid(reliability_endpoint.server.ws_url)
    replies = group_replies(frames)
    assert [r.end["code"] for r in replies[:-1] if r.end] == expected
    for reply in replies[:-1]:
        assert reply.kind == "error" and not reply.audio and reply.end is not None
        assert reply.end["message"]
        assert_no_leak(json.dumps(reply.end))
    assert replies[-1].request_id == "ok"
    check_complete(replies[-1])
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 10)


@pytest.mark.parametrize("text", ["🚀🚀🚀", "\x00\x01\x02", "。。。", "....", "\u202e\u200b", "ⅷ ℵ ∞"])
def test_reliability_input_ws_unspeakable_text_ends_cleanly(reliability_endpoint: Any, text: str) -> None:
    # Valid JSON with text the model may have no phonemes for: a clean end (complete, possibly with no
    # audio, or a documented error), never a hang or a dead session.
    async def run() -> list[Any]:
        async with connect(reliability_endpoint.server.ws_url) as ws:
            await ws.send(synthesize_frame(text, "odd"))
            await ws.send(synthesize_frame("Ok.", "after"))
            return await read_until(ws, 2, limit_s=240)

    odd, after = group_replies(asyncio.run(run()))
    assert odd.request_id == "odd" and odd.end is not None
    if odd.kind == "synthesis_complete":
        assert odd.end["audio_bytes"] == len(odd.audio) and len(odd.audio) % 2 == 0
    else:
        assert odd.kind == "error" and odd.end["code"] in {"invalid_request", "internal"}
        assert_no_leak(json.dumps(odd.end))
    check_complete(after)


def test_reliability_input_ws_lone_surrogate_request_id(reliability_endpoint: Any) -> None:
    async def run() -> list[Any]:
        async with connect(reliability_endpoint.server.ws_url) as ws:
            await ws.send('{"type": "synthesize", "text": "Hi.", "request_id": "\\udc00"}')
            await ws.send(synthesize_frame("Ok.", "after"))
            return await read_until(ws, 2, limit_s=120)

    replies = group_replies(asyncio.run(run()))
    assert replies[0].kind == "error" and replies[0].end is not None
    assert replies[0].end["code"] == "invalid_request"
    check_complete(replies[1])


def test_reliability_input_ws_frame_over_protocol_limit_closes_only_that_session(
    reliability_endpoint: Any,
) -> None:
    # Past ws_max_size (4x max_frame_bytes, as the CLI serves it) the protocol layer closes with 1009
    # before the app sees the frame; the endpoint keeps serving everyone else.
    async def run() -> int | None:
        async with connect(reliability_endpoint.server.ws_url, max_size=2**22) as ws:
            await ws.send(b"\x00" * (4 * LIMIT + 1))
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 30)
            return ws.close_code

    assert asyncio.run(run()) == 1009
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 10)
    assert httpx.get(f"{reliability_endpoint.server.base_url}/ping", timeout=10).status_code == 200


def test_reliability_input_ws_busy_when_sessions_or_queue_are_full(onnx_engine: Any) -> None:
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    app = create_app(engine=onnx_engine, settings=Settings(max_sessions=2, max_pending_requests=2))

    async def run(url: str, base_url: str) -> None:
        async with connect(url) as first, connect(url) as second:
            async with connect(url) as third:
                refused = json.loads(await asyncio.wait_for(third.recv(), 30))
                assert refused["type"] == "error" and refused["code"] == "busy"
                assert_no_leak(json.dumps(refused))
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(third.recv(), 30)
                assert third.close_code == 1013
            async with httpx.AsyncClient() as client:
                answer = await client.post(f"{base_url}/invocations", json={"text": "Hi."}, timeout=30)
            assert answer.status_code == 503 and answer.json()["code"] == "busy"
            # Queue limit: the third request of a session waiting on two is refused with its id.
            for index in range(3):
                await first.send(synthesize_frame("One two three four five six.", f"q{index}"))
            await first.send(json.dumps({"type": "cancel"}))
            replies = group_replies(await read_until(first, 3, limit_s=120))
            busy = [r for r in replies if r.kind == "error"]
            assert [(r.request_id, r.end["code"]) for r in busy if r.end] == [("q2", "busy")]
            assert {r.request_id for r in replies if r.kind != "error"} == {"q0", "q1"}
            await second.close()
        async with connect(url) as again:  # capacity came back
            await again.send(synthesize_frame("Ok.", "back"))
            (reply,) = group_replies(await read_until(again, 1, limit_s=120))
            check_complete(reply)

    with running_server(app) as server:
        asyncio.run(run(server.ws_url, server.base_url))
        assert wait_for(lambda: app.state.endpoint.capacity.in_use == 0, 10)


POST_CASES: list[tuple[bytes, dict[str, str], int, str]] = [
    (b"not json", {}, 400, "invalid_json"),
    (b"\xff\xfe\x00{", {}, 400, "invalid_json"),
    (b'{"text": "caf\xe9"}', {}, 400, "invalid_json"),
    (b"[1, 2]", {}, 400, "invalid_json"),
    (b"", {}, 400, "invalid_json"),
    (b"[" * 30_000 + b"]" * 30_000, {}, 400, "invalid_json"),
    (b'{"text": 5}', {}, 400, "invalid_request"),
    (b'{"text": "  "}', {}, 400, "invalid_request"),
    (b'{"type": "cancel"}', {}, 400, "invalid_request"),
    (b'{"text": "a", "speed": 1e400}', {}, 400, "invalid_request"),
    (b'{"text": "a", "transport": "carrier-pigeon"}', {}, 400, "invalid_request"),
    (b'{"text": "a", "transport": ["sse"]}', {}, 400, "invalid_request"),
    (b'{"text": "a", "format": "flac"}', {}, 400, "invalid_request"),
    (b'{"text": "a", "format": 3}', {}, 400, "invalid_request"),
    (b'{"text": "a", "voice": "nope"}', {}, 400, "unknown_voice"),
    (json.dumps({"text": "a" * (TEXT_LIMIT + 1)}).encode(), {}, 400, "text_too_long"),
    (b'{"text": "' + b"a" * (LIMIT + 1) + b'"}', {}, 413, "invalid_request"),
]


@pytest.mark.parametrize(("body", "headers", "status", "code"), POST_CASES)
def test_reliability_input_post_hostile_bodies(
    reliability_endpoint: Any, body: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    answer = httpx.post(
        f"{reliability_endpoint.server.base_url}/invocations", content=body, headers=headers, timeout=60
    )
    assert answer.status_code == status, answer.text
    assert answer.json()["type"] == "error" and answer.json()["code"] == code
    assert_no_leak(answer.text)
    # The server gives a slot back just after the last byte is sent: wait for it, as the other tests do.
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 30), reliability_endpoint.sessions


def test_reliability_input_post_streamed_body_over_limit_without_length(reliability_endpoint: Any) -> None:
    # Chunked upload with no Content-Length: the limit holds while reading, not only on the header.
    def body() -> Any:
        for _ in range(40):
            yield b"x" * 4096

    answer = httpx.post(f"{reliability_endpoint.server.base_url}/invocations", content=body(), timeout=60)
    assert answer.status_code == 413 and answer.json()["code"] == "invalid_request"
    assert_no_leak(answer.text)
    ok = httpx.post(
        f"{reliability_endpoint.server.base_url}/invocations",
        json={"text": "Ok."},
        timeout=httpx.Timeout(240),
    )
    assert ok.status_code == 200 and len(ok.content) > 0 and len(ok.content) % 2 == 0
    # The slot is released just after the response's last byte, so the client can finish first.
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 30), reliability_endpoint.sessions


APP_CASES: list[Any] = [
    (b"not json", "invalid_json"),
    (b"\xff\xfe\x00", "invalid_json"),
    (b'{"prompt": "caf\xe9"}', "invalid_json"),
    (b"[" * 30_000 + b"]" * 30_000, "invalid_json"),  # deeply nested: RecursionError in the parser
    (b'"just a string"', "invalid_request"),
    (b"null", "invalid_request"),
    (b'{"prompt": 5}', "invalid_request"),
    (b'{"prompt": {"$gt": ""}}', "invalid_request"),
    (b'{"prompt": "hi", "mode": ["bidi"]}', "invalid_request"),
    (b'{"prompt": "hi", "speed": 1e400}', "invalid_request"),
    (b'{"prompt": "hi", "voice": "../../etc/passwd"}', "invalid_request"),
    (b'{"prompt": "hi", "__proto__": {}}', "invalid_request"),
    (json.dumps({"prompt": "a" * 200_000}).encode(), "invalid_request"),  # 200 kB: under the body bound
]


@pytest.fixture(scope="module")
def app_url(reliability_endpoint: Any) -> Any:
    """The example app (fast scripted model) in front of the real endpoint, on 127.0.0.1."""
    from agentcore_app.app import create_app
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    model = ScriptedModel(text="Short answer here.", first_sentence_s=0.1, total_s=0.2)
    app = create_app(tts_url=reliability_endpoint.server.ws_url, model=model, silence_timeout=120)
    with running_server(app) as server:
        yield server.base_url


@pytest.mark.parametrize(("body", "code"), APP_CASES)
def test_reliability_input_app_hostile_payloads(app_url: str, body: bytes, code: str) -> None:
    answer = httpx.post(
        f"{app_url}/invocations", content=body, headers={"Content-Type": "application/json"}, timeout=60
    )
    assert answer.status_code == 400, answer.text[:300]
    event = answer.json()
    assert event["type"] == "error" and event["code"] == code and event["message"]
    assert_no_leak(answer.text)


def test_reliability_input_app_serves_after_hostile_payloads(app_url: str, reliability_endpoint: Any) -> None:
    from support.reliability import sse_events

    for case in APP_CASES:  # the deep-nesting one (a 500 today) included
        body = case.values[0] if hasattr(case, "marks") else case[0]
        httpx.post(
            f"{app_url}/invocations", content=body, headers={"Content-Type": "application/json"}, timeout=60
        )
    with (
        httpx.Client(timeout=httpx.Timeout(10, read=240)) as client,
        client.stream("POST", f"{app_url}/invocations", json={"prompt": "Hi"}) as response,
    ):
        assert response.status_code == 200
        events = list(sse_events(response))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end" and "error" not in kinds
    assert "audio_chunk" in kinds
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 10)
