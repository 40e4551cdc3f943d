"""Limits and failure behaviour on the real server: capacity, idle timeout, disconnects, internal errors.

These servers wrap the real ONNX engine in a recorder (it only notes when each segment was produced) so
the tests can see when synthesis work happened and when it stopped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kokoro_endpoint.serving.app import create_app
from kokoro_endpoint.serving.runner import RunningServer, running_server
from kokoro_endpoint.serving.state import EndpointState
from kokoro_endpoint.settings import Settings
from support.endpoint import RecordingEngine, collect, replies
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

FOUR_SENTENCES = "The first sentence is here. A second one follows it. Then comes a third. The last one ends."


@pytest.fixture(scope="module")
def recorder(onnx_engine: Any) -> RecordingEngine:
    return RecordingEngine(onnx_engine, fail_on="EXPLODE")


@pytest.fixture(scope="module")
def limited_server(recorder: RecordingEngine) -> Iterator[RunningServer]:
    # Admission off: these tests are about the session limits and the scheduler's turns, which admission
    # would pre-empt (tests/endpoint/scheduling/test_admission.py).
    settings = Settings(max_sessions=2, max_pending_requests=3, idle_timeout_s=60.0, admission_max_load=None)
    with running_server(create_app(engine=recorder, settings=settings)) as server:
        yield server


def _state(server: RunningServer) -> EndpointState:
    app = server._server.config.app
    state = app.state.endpoint
    assert isinstance(state, EndpointState)
    return state


async def _wait_until(predicate: Any, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return bool(predicate())


def test_full_session_limit_answers_busy(limited_server: RunningServer) -> None:
    state = _state(limited_server)

    async def run() -> None:
        first = await connect(limited_server.ws_url)
        second = await connect(limited_server.ws_url)
        assert await _wait_until(lambda: state.capacity.in_use == 2, 10)
        async with connect(limited_server.ws_url) as third:
            refusal = json.loads(await asyncio.wait_for(third.recv(), 10))
            assert refusal["type"] == "error" and refusal["code"] == "busy"
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(third.recv(), 10)
            assert third.close_code == 1013
        async with httpx.AsyncClient(timeout=10) as client:
            response = await client.post(f"{limited_server.base_url}/invocations", json={"text": "Hi."})
        assert response.status_code == 503
        assert response.json()["code"] == "busy"
        await first.close()
        assert await _wait_until(lambda: state.capacity.in_use == 1, 10)
        async with connect(limited_server.ws_url) as again:
            await again.send(json.dumps({"text": "Yes.", "request_id": "y"}))
            (reply,) = replies(await collect(again, terminals=1))
            assert reply.kind == "synthesis_complete"
        await second.close()
        assert await _wait_until(lambda: state.capacity.in_use == 0, 10)

    asyncio.run(run())


def test_too_many_pending_requests_answers_busy(limited_server: RunningServer) -> None:
    async def run() -> None:
        async with connect(limited_server.ws_url) as ws:
            for index in range(5):
                await ws.send(json.dumps({"text": f"Number {index}.", "request_id": f"p{index}"}).encode())
            # Cancel drops the work; every request still gets its answer, in order.
            await ws.send(json.dumps({"type": "cancel"}).encode())
            got = replies(await collect(ws, terminals=5))
        assert [(r.request_id, r.kind) for r in got] == [
            ("p0", "synthesis_cancelled"),
            ("p1", "synthesis_cancelled"),
            ("p2", "synthesis_cancelled"),
            ("p3", "error"),
            ("p4", "error"),
        ]
        assert {r.end["code"] for r in got[3:] if r.end} == {"busy"}

    asyncio.run(run())


def test_internal_error_hides_details_and_session_survives(limited_server: RunningServer) -> None:
    async def run() -> None:
        async with connect(limited_server.ws_url) as ws:
            await ws.send(json.dumps({"text": "Please EXPLODE now.", "request_id": "bad"}))
            await ws.send(json.dumps({"text": "Still here.", "request_id": "good"}))
            got = replies(await collect(ws, terminals=2))
        assert got[0].request_id == "bad" and got[0].end is not None
        assert got[0].end["code"] == "internal"
        assert "boom" not in got[0].end["message"] and "/" not in got[0].end["message"]
        assert got[1].request_id == "good" and got[1].kind == "synthesis_complete"

    asyncio.run(run())


def test_disconnect_mid_synthesis_stops_within_one_segment(
    limited_server: RunningServer, recorder: RecordingEngine
) -> None:
    state = _state(limited_server)
    text = "Disconnect test. " + FOUR_SENTENCES
    since = recorder.mark()

    async def run() -> float:
        ws = await connect(limited_server.ws_url)
        await ws.send(json.dumps({"text": text, "request_id": "gone"}).encode())
        while not isinstance(await asyncio.wait_for(ws.recv(), 240), bytes):
            pass
        dropped_at = time.monotonic()
        ws.transport.abort()  # no close handshake: the client just vanishes
        assert await _wait_until(lambda: state.capacity.in_use == 0, 30), "the slot was not freed"
        closed = await _wait_until(lambda: recorder.closed(text, since), 120)
        assert closed, "synthesis never stopped"
        await asyncio.sleep(1.0)  # nothing more starts: the request is over, not between two sentences
        return dropped_at

    dropped_at = asyncio.run(run())
    assert recorder.closed(text, since)
    produced_after = [at for at in recorder.segments_of(text, since) if at > dropped_at]
    assert len(produced_after) <= 1, f"{len(produced_after)} segments synthesized after the disconnect"
    assert len(recorder.segments_of(text, since)) < 5


def test_first_audio_does_not_wait_for_the_whole_text(
    limited_server: RunningServer, recorder: RecordingEngine
) -> None:
    text = "Streaming test. " + FOUR_SENTENCES
    since = recorder.mark()

    async def run() -> int:
        async with connect(limited_server.ws_url) as ws:
            await ws.send(json.dumps({"text": text, "request_id": "s"}))
            while not isinstance(await asyncio.wait_for(ws.recv(), 240), bytes):
                pass
            segments_when_audio_arrived = len(recorder.segments_of(text, since))
            await ws.send(json.dumps({"type": "cancel"}))
            await collect(ws, terminals=1)
        return segments_when_audio_arrived

    # Audio was on the wire while at most the next segment had been synthesized, not all five.
    assert asyncio.run(run()) <= 2


def test_sessions_take_turns_segment_by_segment(
    limited_server: RunningServer, recorder: RecordingEngine
) -> None:
    long_text = "Fairness test. " + FOUR_SENTENCES
    short_text = "Short turn."
    since = recorder.mark()

    async def run() -> tuple[float, list[Any], str]:
        async with connect(limited_server.ws_url) as a, connect(limited_server.ws_url) as b:
            await a.send(json.dumps({"text": long_text, "request_id": "long"}))
            while not isinstance(await asyncio.wait_for(a.recv(), 240), bytes):
                pass
            asked_at = time.monotonic()
            await b.send(json.dumps({"text": short_text, "request_id": "short"}))
            short_frames = await collect(b, terminals=1)
            # Had the short request waited behind the long text, the long one would be complete by now.
            await a.send(json.dumps({"type": "cancel"}))
            long_end = [f.control for f in await collect(a, terminals=1) if f.control][-1]
        return asked_at, replies(short_frames), str(long_end["type"])

    asked_at, (short,), long_end = asyncio.run(run())
    assert short.kind == "synthesis_complete"
    assert long_end == "synthesis_cancelled", "the short request waited for the whole long one"
    short_done = recorder.segments_of(short_text, since)[0]
    long_between = [at for at in recorder.segments_of(long_text, since) if asked_at < at < short_done]
    # One segment may be running when the short request arrives; FIFO turns mean no second one goes first.
    assert len(long_between) <= 1, f"{len(long_between)} long segments ran before the short request's first"


def test_idle_session_is_closed(onnx_engine: Any) -> None:
    settings = Settings(idle_timeout_s=0.5)

    async def run(server: RunningServer) -> int | None:
        async with connect(server.ws_url) as ws:
            # Closed by the server's idle timer (0.5 s): the reason says so; the wait is only a hang guard.
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 60)
            assert ws.close_reason == "idle timeout"
            return ws.close_code

    with running_server(create_app(engine=onnx_engine, settings=settings)) as server:
        assert asyncio.run(run(server)) == 1000
