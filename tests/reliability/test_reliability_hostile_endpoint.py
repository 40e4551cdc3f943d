"""Hostile callers of the real endpoint lock nothing: a request id a header cannot carry, a blend weight
that overflows, JSON nested past the parser, a body of 64 MB, a client that stops reading an HTTP stream,
and an engine that cannot be loaded. Each is answered (or ended) and the endpoint goes on serving."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.http import chunked_huge_post, urllib_huge_post
from support.reliability import ToneEngine, assert_no_leak, wait_for
from websockets.asyncio.client import connect

#: How long a test waits for something that must happen (a bound, never the thing measured).
GUARD_S = 60.0
#: A request id outside Latin-1: before, the endpoint took a slot, failed building its header, kept it.
HOSTILE_ID = "\u20ac1"
#: A weight of 1 followed by 400 zeros: a float reads it as infinity.
OVERFLOWING_BLEND = "af_heart(1" + "0" * 400 + ")"
DEEP_JSON = b"[" * 30_000 + b"]" * 30_000


@pytest.fixture(scope="module")
def served(onnx_engine: Any) -> Iterator[tuple[Any, Any]]:
    """The real endpoint with the default settings (16 sessions), logging to the root logger."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(engine=onnx_engine)
    # log_config=None: uvicorn's own records ("Exception in ASGI application") reach caplog too.
    with running_server(app, log_config=None) as server:
        yield app, server


def _post(server: Any, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.post(f"{server.base_url}{path}", timeout=GUARD_S, **kwargs)


def _ws_replies(server: Any, frames: list[str | bytes]) -> list[dict[str, Any]]:
    """One control reply per frame (each here is refused with an error frame)."""

    async def run() -> list[dict[str, Any]]:
        async with connect(server.ws_url, max_size=2**22) as ws:
            for frame in frames:
                await ws.send(frame)
            return [json.loads(await asyncio.wait_for(ws.recv(), GUARD_S)) for _ in frames]

    return asyncio.run(run())


def test_seventeen_hostile_request_ids_then_an_ordinary_request_is_served(served: tuple[Any, Any]) -> None:
    app, server = served
    for _ in range(17):  # one more than the endpoint's 16 slots
        answer = _post(server, "/invocations", json={"text": "Hi.", "request_id": HOSTILE_ID})
        assert answer.status_code == 400, answer.text
        assert answer.json()["code"] == "invalid_request" and "request_id" not in answer.json()
        assert_no_leak(answer.text)
    frames: list[str | bytes] = [
        json.dumps({"text": "Hi.", "request_id": rid}) for rid in (HOSTILE_ID, "", "x" * 129, "a b")
    ]
    frames.append(json.dumps({"type": "cancel", "request_id": HOSTILE_ID}))
    assert [(r["type"], r["code"], r.get("request_id")) for r in _ws_replies(server, frames)] == [
        ("error", "invalid_request", None)
    ] * len(frames)
    # The WebSocket session gives its slot back once it sees the close: nothing else holds one.
    assert wait_for(lambda: app.state.endpoint.capacity.in_use == 0, GUARD_S)
    ordinary = _post(server, "/invocations", json={"text": "Hi.", "request_id": "ordinary-1"})
    assert ordinary.status_code == 200 and ordinary.headers["x-request-id"] == "ordinary-1"
    assert len(ordinary.content) > 0
    assert wait_for(lambda: app.state.endpoint.capacity.in_use == 0, GUARD_S)


def test_a_request_id_with_a_newline_forges_no_log_line(
    served: tuple[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    _app, server = served
    forged = 'a\n{"_aws": {"CloudWatchMetrics": []}, "Errors": 0}'
    caplog.set_level(logging.DEBUG)
    answer = _post(server, "/invocations", json={"text": "Hi.", "request_id": forged})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_request"
    [reply] = _ws_replies(server, [json.dumps({"text": "Hi.", "request_id": forged})])
    assert (reply["code"], reply.get("request_id")) == ("invalid_request", None)
    assert not [r.getMessage() for r in caplog.records if "\n" in r.getMessage()]


def test_an_overflowing_blend_weight_is_an_invalid_request_everywhere(served: tuple[Any, Any]) -> None:
    _app, server = served
    answer = _post(server, "/invocations", json={"text": "Hi.", "voice": OVERFLOWING_BLEND})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_request", answer.text
    speech = {"model": "kokoro", "input": "Hi.", "voice": OVERFLOWING_BLEND}
    openai = _post(server, "/v1/audio/speech", json=speech)
    assert openai.status_code == 400 and openai.json()["error"]["code"] == "invalid_request", openai.text
    [reply] = _ws_replies(
        server, [json.dumps({"text": "Hi.", "voice": OVERFLOWING_BLEND, "request_id": "w"})]
    )
    assert (reply["type"], reply["code"], reply["request_id"]) == ("error", "invalid_request", "w")


def test_json_nested_past_the_parser_is_a_400_without_a_trace_at_every_door(
    served: tuple[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    _app, server = served
    caplog.set_level(logging.INFO)
    for path in ("/invocations", "/v1/audio/speech"):
        answer = _post(server, path, content=DEEP_JSON, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400, (path, answer.text)
        assert_no_leak(answer.text)
    [reply] = _ws_replies(server, [DEEP_JSON.decode()])
    assert (reply["type"], reply["code"]) == ("error", "invalid_json")
    traces = [r.getMessage() for r in caplog.records if r.exc_info is not None or r.levelno >= logging.ERROR]
    assert not traces


@pytest.mark.parametrize("path", ["/invocations", "/v1/audio/speech"])
def test_a_64_mb_body_sent_whole_by_urllib_reads_its_413(served: tuple[Any, Any], path: str) -> None:
    # urllib writes all 64 MB before it reads: the endpoint answers, then discards the rest before closing.
    _app, server = served
    status, answer = urllib_huge_post(f"{server.base_url}{path}")
    assert status == 413
    assert_no_leak(json.dumps(answer))
    assert "larger than" in json.dumps(answer)


def test_a_64_mb_chunked_body_sent_whole_reads_its_413(served: tuple[Any, Any]) -> None:
    _app, server = served
    status, body = chunked_huge_post(server.port, "/invocations")
    assert status.startswith("HTTP/1.1 413"), status
    assert json.loads(body)["code"] == "invalid_request"


def test_an_http_stream_whose_client_stops_reading_frees_its_slot() -> None:
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    settings = Settings(max_sessions=1, send_timeout_s=1.0)
    app = create_app(engine=ToneEngine(seconds_per_word=10.0), settings=settings)  # type: ignore[arg-type]
    with running_server(app) as server:
        body = json.dumps({"text": "word " * 200}).encode()  # 96 MB of audio: far past any socket buffer
        head = "POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        head += f"Content-Length: {len(body)}\r\n\r\n"
        with socket.create_connection(("127.0.0.1", server.port), timeout=GUARD_S) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(head.encode() + body)
            assert wait_for(lambda: app.state.endpoint.capacity.in_use == 1, GUARD_S)
            # It reads nothing: the stream is dropped and its only slot is free again.
            assert wait_for(lambda: app.state.endpoint.capacity.in_use == 0, GUARD_S)
        ordinary = httpx.post(f"{server.base_url}/invocations", json={"text": "word"}, timeout=GUARD_S)
        assert ordinary.status_code == 200 and len(ordinary.content) == 480_000


def test_the_metrics_keep_no_arrival_of_an_answered_request() -> None:
    from kokoro_endpoint.serving.metrics import SessionWatch, metrics_from_env

    lines: list[str] = []
    metrics = metrics_from_env({"KOKORO_METRICS": "emf"}, write=lines.append)
    assert metrics is not None
    watch = SessionWatch(metrics, max_frame_bytes=65_536)
    for number in range(200):  # no request_id: the session names each one itself
        watch.received({"type": "websocket.receive", "text": json.dumps({"text": "Hi."})})
        rid = f"generated-{number}"
        for frame in (
            {"type": "synthesis_start", "request_id": rid},
            {"type": "synthesis_complete", "request_id": rid},
        ):
            watch.sent({"type": "websocket.send", "text": json.dumps(frame)})
    watch.received({"type": "websocket.receive", "text": json.dumps({"text": "Hi.", "speed": 9})})
    watch.sent({"type": "websocket.send", "text": json.dumps({"type": "error", "code": "invalid_request"})})
    assert watch.waiting == 0


def test_an_engine_that_cannot_be_loaded_ends_the_server_with_the_error(tmp_path: Path) -> None:
    voices = tmp_path / "voices"
    voices.mkdir()
    (voices / "broken.bin").write_bytes(b"not a voice")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "kokoro_endpoint.cli", "--engine", "onnx", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--voices", str(voices), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        _out, err = process.communicate(timeout=GUARD_S * 2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("the endpoint stayed up (answering /ping with 'loading') after its engine failed to load")
    assert process.returncode == 1
    assert b"could not be loaded" in err and b"is not a Kokoro voice" in err
