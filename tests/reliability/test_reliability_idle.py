"""The endpoint's idle timeout counts idle time, not session age; the client's keepalive keeps it open.

The real endpoint app (with the fast tone engine: nothing here is about speech) and the real
TTSSession over a WebSocket. Waits are for conditions, bounded; the idle timeouts leave a margin of ten
keepalive intervals or more, so a loaded machine does not decide the result.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from support.reliability import ToneEngine, synthesize_frame
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import AudioChunk, RequestCompleted, RequestFailed, SessionEvent
from strands_voice.transports._websocket import WebSocketTransport

IDLE_S = 2.0


def _endpoint(idle_s: float = IDLE_S) -> Any:
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    app = create_app(engine=ToneEngine(seconds_per_word=0.05), settings=Settings(idle_timeout_s=idle_s))  # type: ignore[arg-type]
    return running_server(app)


class WatchedTransport(WebSocketTransport):
    """The real WebSocket transport, counting the session's closes of it (a lost connection is closed)."""

    closes = 0

    async def close(self) -> None:
        self.closes += 1
        await super().close()


async def _listening(url: str, keepalive_s: float | None) -> tuple[TTSSession, list[SessionEvent], Any]:
    """An open session whose events a task collects: (session, events so far, that task)."""
    session = TTSSession(WatchedTransport(url), keepalive_s=keepalive_s)
    await session.open()
    events: list[SessionEvent] = []

    async def receive() -> None:
        async for event in session:
            events.append(event)

    return session, events, asyncio.create_task(receive())


def _run(coro: Any, limit_s: float = 60.0) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(limit_s):
            return await coro

    return asyncio.run(bounded())


def test_reliability_idle_keepalive_keeps_a_slow_agents_session_open() -> None:
    """An agent that thinks for 2.5x the idle timeout keeps its session: the same connection speaks."""

    async def main(url: str) -> tuple[list[SessionEvent], int]:
        session, events, receiver = await _listening(url, keepalive_s=IDLE_S / 20)
        await asyncio.sleep(2.5 * IDLE_S)  # the agent thinks (a tool call, a slow model)
        rid = await session.synthesize("Still here.")
        await session.finish()
        await receiver
        await session.close()
        assert isinstance(events[-1], RequestCompleted) and events[-1].request_id == rid
        return events, session.reconnects

    with _endpoint() as server:
        events, reconnects = _run(main(server.ws_url))
    assert reconnects == 0, "the endpoint closed the session despite the keepalives"
    assert isinstance(events[-1], RequestCompleted)
    assert not any(isinstance(e, RequestFailed) for e in events), "a keepalive was answered as an error"


def test_reliability_idle_close_without_keepalive_is_resumed_at_the_next_sentence() -> None:
    """No keepalive: the endpoint closes the idle session (1000, idle timeout); the next sentence
    reconnects and is spoken."""

    async def main(url: str) -> tuple[list[SessionEvent], int]:
        session, events, receiver = await _listening(url, keepalive_s=None)
        transport = session.transport
        assert isinstance(transport, WatchedTransport)
        for _ in range(int(30 * IDLE_S / 0.05)):
            if transport.closes:
                break
            await asyncio.sleep(0.05)
        assert transport.closes, "the idle session was never closed"
        await session.synthesize("Back again.")
        await session.finish()
        await receiver
        await session.close()
        return events, session.reconnects

    with _endpoint() as server:
        events, reconnects = _run(main(server.ws_url))
    assert reconnects == 1
    assert any(isinstance(e, AudioChunk) for e in events)
    assert isinstance(events[-1], RequestCompleted)


def test_reliability_idle_timeout_counts_idle_time_not_session_age() -> None:
    """Requests spaced well under the idle timeout keep one connection open for 3x the timeout."""

    async def main(url: str) -> tuple[int, int | None, str | None]:
        completed = 0
        async with connect(url) as ws:
            loop = asyncio.get_running_loop()
            began = loop.time()
            index = 0
            while loop.time() - began < 3 * IDLE_S:
                await ws.send(synthesize_frame("word", f"r{index}"))
                index += 1
                while True:
                    frame = await asyncio.wait_for(ws.recv(), 30)
                    if isinstance(frame, str) and json.loads(frame)["type"] == "synthesis_complete":
                        completed += 1
                        break
                await asyncio.sleep(IDLE_S / 10)
            # Then silence: the idle timeout closes the session normally.
            try:
                await asyncio.wait_for(ws.recv(), 30 * IDLE_S)
            except ConnectionClosed:
                pass
            return completed, ws.close_code, ws.close_reason

    with _endpoint() as server:
        completed, code, reason = _run(main(server.ws_url), limit_s=120)
    assert completed >= 10
    assert (code, reason) == (1000, "idle timeout")
