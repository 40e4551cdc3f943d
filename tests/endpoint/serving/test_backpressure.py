"""Backpressure inside one request: a client that stops reading stops the synthesis of its session.

Narrow unit tests of :class:`EndpointSession` with stand-ins (a counting engine that makes big segments fast,
and a WebSocket whose sending can be held), so the bound is exact and not blurred by socket buffers.
The real server with a stalled socket is covered by tests/reliability (stalled consumer tests).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

import pytest
from kokoro_endpoint.engines.silence import SilencePolicy
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.ws_session import AUDIO_BUFFER_SEGMENTS, MAX_QUEUED_ERRORS, EndpointSession
from kokoro_endpoint.settings import Settings
from support.endpoint import CountingEngine, HeldWebSocket

pytestmark = pytest.mark.timeout(60)

# Raw engine audio (no silence trimming or pauses): the byte counts below are the engine's own.
SETTINGS = Settings(audio_frame_bytes=24_000, silence=SilencePolicy(trim=False))
# Synthesized while the sender is stuck: the segment being sent, the queue's, and one waiting to go in.
MOST_AHEAD = AUDIO_BUFFER_SEGMENTS + 2


async def _until(condition: Any, limit_s: float = 20.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def _settled(read: Any, quiet_s: float = 0.3) -> int:
    """Wait until ``read()`` stops changing for ``quiet_s``; return its value."""
    value = read()
    while True:
        await asyncio.sleep(quiet_s)
        if read() == value:
            return int(value)
        value = read()


def test_endpoint_stalled_sender_bounds_synthesis_of_one_long_request_then_delivers_it_all() -> None:
    engine = CountingEngine()
    text = " ".join(["word"] * 60)

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        ws = HeldWebSocket()
        running = asyncio.create_task(EndpointSession(ws, engine, scheduler, SETTINGS).run())  # type: ignore[arg-type]
        try:
            ws.push({"text": text, "request_id": "long"})
            made = await _settled(lambda: engine.made(text))
            assert made <= MOST_AHEAD, made  # not 60: the synthesis waits for the client
            ws.gate.set()  # the client reads again: everything arrives, in full
            await _until(lambda: ws.ended("long") is not None)
            assert ws.ended("long") == {
                **ws.ended("long"),
                "type": "synthesis_complete",
                "audio_bytes": 60 * 48_000,
            }
            assert ws.audio_bytes == 60 * 48_000
            ws.push({"type": "close"})
            await asyncio.wait_for(running, 10)
            assert ws.closed_with == 1000
        finally:
            running.cancel()
            scheduler.shutdown()

    asyncio.run(main())


def test_endpoint_cancel_releases_a_synthesis_waiting_for_room() -> None:
    engine = CountingEngine()
    text = " ".join(["cancelled"] * 60)

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        ws = HeldWebSocket()
        running = asyncio.create_task(EndpointSession(ws, engine, scheduler, SETTINGS).run())  # type: ignore[arg-type]
        try:
            ws.push({"text": text, "request_id": "c"})
            made = await _settled(lambda: engine.made(text))
            assert made <= MOST_AHEAD
            ws.push({"type": "cancel", "request_id": "c"})
            await asyncio.sleep(0.2)
            ws.gate.set()
            await _until(lambda: ws.ended("c") is not None)
            assert ws.ended("c") == {"type": "synthesis_cancelled", "request_id": "c"}
            assert engine.made(text) <= made + 1  # the blocked put was released, not completed
            # The session is not wedged: the next request is synthesized and sent in full.
            ws.push({"text": "after the cancel", "request_id": "next"})
            await _until(lambda: ws.ended("next") is not None)
            assert ws.ended("next")["type"] == "synthesis_complete"  # type: ignore[index]
            assert engine.made(text) == await _settled(lambda: engine.made(text))
        finally:
            running.cancel()
            scheduler.shutdown()

    asyncio.run(main())


def test_endpoint_disconnect_ends_a_session_whose_synthesis_waits_for_room() -> None:
    engine = CountingEngine()
    text = " ".join(["gone"] * 60)

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        ws = HeldWebSocket()
        running = asyncio.create_task(EndpointSession(ws, engine, scheduler, SETTINGS).run())  # type: ignore[arg-type]
        try:
            ws.push({"text": text, "request_id": "g"})
            made = await _settled(lambda: engine.made(text))
            ws.disconnect()
            # Every task stops well within close_timeout_s, though the sender is stuck in a send.
            await asyncio.wait_for(running, SETTINGS.close_timeout_s)
            await asyncio.sleep(0.3)
            assert engine.made(text) <= made + 1
        finally:
            running.cancel()
            scheduler.shutdown()

    asyncio.run(main())


def test_endpoint_stalled_session_does_not_hold_the_shared_scheduler() -> None:
    # One synthesis worker, two sessions: one client stops reading mid-request; the other is served.
    engine = CountingEngine(segment_s=0.01)
    stalled_text = " ".join(["stalled"] * 200)
    served_text = " ".join(["served"] * 20)

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        stalled, served = HeldWebSocket(), HeldWebSocket()
        served.gate.set()
        sessions = [
            asyncio.create_task(EndpointSession(ws, engine, scheduler, SETTINGS).run())  # type: ignore[arg-type]
            for ws in (stalled, served)
        ]
        try:
            stalled.push({"text": stalled_text, "request_id": "s"})
            await _settled(lambda: engine.made(stalled_text))
            # The stalled session never reads again: had the served request queued behind it for the one
            # synthesis worker, it would never complete (the wait below would run out).
            served.push({"text": served_text, "request_id": "ok"})
            await _until(lambda: served.ended("ok") is not None, limit_s=60.0)
            assert served.ended("ok")["type"] == "synthesis_complete"  # type: ignore[index]
            assert engine.made(stalled_text) <= MOST_AHEAD
        finally:
            for task in sessions:
                task.cancel()
            await asyncio.gather(*sessions, return_exceptions=True)
            scheduler.shutdown()

    asyncio.run(main())


class FloodingWebSocket:
    """A client that sends invalid frames without end and reads nothing: every send_text blocks."""

    def __init__(self) -> None:
        self.frames_read = 0
        self.gate = asyncio.Event()  # closed: the client reads nothing
        self.errors: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        self.frames_read += 1
        await asyncio.sleep(0)  # a real socket yields too
        return {"type": "websocket.receive", "text": "{not json"}

    async def send_text(self, data: str) -> None:
        await self.gate.wait()
        self.errors.append(json.loads(data))

    async def send_bytes(self, data: bytes) -> None:
        await self.gate.wait()

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        pass


def test_endpoint_stops_reading_a_client_that_floods_bad_frames_without_reading_the_answers() -> None:
    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        ws = FloodingWebSocket()
        running = asyncio.create_task(EndpointSession(ws, CountingEngine(), scheduler, SETTINGS).run())  # type: ignore[arg-type]
        try:
            await asyncio.sleep(0.5)  # unbounded, the flood would be read thousands of times by now
            read = ws.frames_read
            # The error being sent, the queued ones, and the frame waiting for a slot: not thousands.
            assert read <= MAX_QUEUED_ERRORS + 2, read
            ws.gate.set()  # the client reads again: the answers flow, in order, and reading resumes
            await _until(lambda: len(ws.errors) > 10 * MAX_QUEUED_ERRORS)
            assert {error["type"] for error in ws.errors} == {"error"}
            assert {error["code"] for error in ws.errors} == {"invalid_json"}
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
            scheduler.shutdown()

    asyncio.run(main())


def test_endpoint_session_task_that_fails_ends_the_session_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class BrokenWebSocket(HeldWebSocket):
        async def receive(self) -> dict[str, Any]:
            raise RuntimeError("the socket broke")

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        try:
            session = EndpointSession(BrokenWebSocket(), CountingEngine(), scheduler, SETTINGS)  # type: ignore[arg-type]
            await asyncio.wait_for(session.run(), SETTINGS.close_timeout_s * 2)
        finally:
            scheduler.shutdown()

    with caplog.at_level("ERROR", logger="kokoro_endpoint.serving.ws_session"):
        asyncio.run(main())
    failed = [record for record in caplog.records if "failed" in record.getMessage()]
    assert [record.getMessage() for record in failed] == ["task=<ws-receive> | failed"]
    assert failed[0].exc_info is not None and str(failed[0].exc_info[1]) == "the socket broke"
