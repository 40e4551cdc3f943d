"""A Leg 1 session cannot be held for ever: a client that stops reading is dropped after the send timeout,
and a session is closed at its maximum age however it keeps itself alive (keepalives, requests).

Unit tests of :class:`EndpointSession` with a WebSocket whose sending the test holds (a client that reads
nothing behind a proxy: no socket buffer, no ping to end it first)."""

from __future__ import annotations

import asyncio

import pytest
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.ws_session import EndpointSession
from kokoro_endpoint.settings import Settings
from support.endpoint import CountingEngine, HeldWebSocket

pytestmark = pytest.mark.timeout(60)

#: How long the tests wait for a session to end (a bound, never the thing measured).
GUARD_S = 30.0


async def _keep_alive(ws: HeldWebSocket) -> None:
    """What a hostile client does to stay open: a keepalive every 0.1 s, for as long as it is let."""
    while True:
        ws.push({"type": "keepalive"})
        await asyncio.sleep(0.1)


def _serve(ws: HeldWebSocket, settings: Settings, first: dict[str, object] | None = None) -> None:
    """Run one session over ``ws`` with a keepalive client until it ends (at most ``GUARD_S``)."""

    async def main() -> None:
        scheduler = SynthesisScheduler(1)
        session = asyncio.create_task(EndpointSession(ws, CountingEngine(), scheduler, settings).run())  # type: ignore[arg-type]
        if first is not None:
            ws.push(first)
        client = asyncio.create_task(_keep_alive(ws))
        try:
            await asyncio.wait_for(session, GUARD_S)
        finally:
            client.cancel()
            await asyncio.gather(client, return_exceptions=True)
            scheduler.shutdown()

    asyncio.run(main())


def test_a_client_that_stops_reading_is_dropped_after_the_send_timeout() -> None:
    ws = HeldWebSocket()  # its gate stays shut: no audio frame is ever taken
    settings = Settings(send_timeout_s=0.5)
    _serve(ws, settings, first={"text": "word " * 40, "request_id": "held"})
    assert ws.audio_bytes == 0
    assert ws.ended("held") is None  # dropped, not answered: there is no one reading


def test_a_session_kept_alive_is_closed_at_its_maximum_age() -> None:
    ws = HeldWebSocket()
    ws.gate.set()
    _serve(ws, Settings(max_session_s=0.5))
    assert ws.closed_with == 1001  # going away: a client with audio owed reconnects and resumes


def test_the_session_limits_are_settings_and_must_be_positive() -> None:
    from kokoro_endpoint.cli import build_parser, settings_from_args

    args = build_parser().parse_args(["--max-session-age", "120", "--send-timeout", "15"])
    settings = settings_from_args(args)
    assert (settings.max_session_s, settings.send_timeout_s) == (120.0, 15.0)
    for bad in ({"max_session_s": 0}, {"send_timeout_s": -1}):
        with pytest.raises(ValueError):
            Settings(**bad)  # type: ignore[arg-type]
