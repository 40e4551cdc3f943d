"""The raw Leg 1 timing client, against a fake endpoint on 127.0.0.1:0 that records what it received."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from strands_voice_protocol.errors import TTSRequestError, TTSTimeoutError
from strands_voice_tools.bench.endpoint_probe import measure_concurrent, measure_request
from websockets.asyncio.server import ServerConnection, serve

AUDIO_DELAY_S = 0.2


@dataclass
class FakeEndpoint:
    """Answers each synthesize with start, a delay, two audio frames and complete; records messages."""

    url: str = ""
    received: list[dict[str, object]] = field(default_factory=list)
    error_code: str | None = None
    silent: bool = False
    honour_cancel: bool = False
    sessions: int = 0

    async def handle(self, ws: ServerConnection) -> None:
        self.sessions += 1
        async for raw in ws:
            message = json.loads(raw)
            self.received.append(message)
            if message.get("type") == "close":
                await ws.close(1000)
                return
            rid = message.get("request_id")
            if self.silent:
                continue
            if self.error_code:
                await ws.send(
                    json.dumps({"type": "error", "request_id": rid, "code": self.error_code, "message": "x"})
                )
                continue
            await ws.send(json.dumps({"type": "synthesis_start", "request_id": rid, "format": "pcm16"}))
            await asyncio.sleep(AUDIO_DELAY_S)
            # PCM may begin with "{" and is still audio (binary frame); 0x407B is loud: a heard sound.
            await ws.send(b"{\x40" * 2400)
            if self.honour_cancel:
                cancel = json.loads(await ws.recv())
                self.received.append(cancel)
                await ws.send(
                    json.dumps({"type": "synthesis_cancelled", "request_id": cancel.get("request_id")})
                )
                continue
            await ws.send(b"\x01\x00" * 2400)
            complete = {
                "type": "synthesis_complete",
                "request_id": rid,
                "audio_bytes": 9600,
                "total_duration_s": 0.2,
                "elapsed_s": 0.21,
            }
            await ws.send(json.dumps(complete))


def against[T](endpoint: FakeEndpoint, client: Callable[[str], Awaitable[T]]) -> T:
    """Serve ``endpoint`` on 127.0.0.1:<free port> and run ``client(url)`` against it."""

    async def main() -> T:
        async with serve(endpoint.handle, "127.0.0.1", 0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            endpoint.url = f"ws://127.0.0.1:{port}/invocations-bidirectional-stream"
            return await client(endpoint.url)

    return asyncio.run(main())


@pytest.fixture
def fake_endpoint() -> FakeEndpoint:
    return FakeEndpoint()


def test_measure_request_times_first_audio_and_sends_one_synthesize(fake_endpoint: FakeEndpoint) -> None:
    timing = against(fake_endpoint, lambda url: measure_request(url, "Hello there.", voice="jm_kumo"))
    assert AUDIO_DELAY_S * 0.9 <= timing.ttfa_s <= timing.total_s
    assert timing.audio_bytes == 9600
    assert timing.audio_duration_s == 0.2
    assert timing.server_elapsed_s == 0.21
    synthesize, close = fake_endpoint.received
    assert synthesize["type"] == "synthesize"
    assert synthesize["text"] == "Hello there."
    assert synthesize["voice"] == "jm_kumo"
    assert isinstance(synthesize["request_id"], str) and synthesize["request_id"]
    assert close == {"type": "close"}


def test_measure_request_raises_the_endpoints_error(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.error_code = "busy"
    with pytest.raises(TTSRequestError) as caught:
        against(fake_endpoint, lambda url: measure_request(url, "Hello there."))
    assert caught.value.code == "busy"


def test_measure_request_times_out_on_a_silent_endpoint(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.silent = True
    with pytest.raises(TTSTimeoutError):
        against(fake_endpoint, lambda url: measure_request(url, "Hello there.", timeout_s=0.5))


def test_measure_concurrent_opens_every_session_before_sending(fake_endpoint: FakeEndpoint) -> None:
    timings = against(fake_endpoint, lambda url: measure_concurrent(url, "Hi.", 3))
    assert len(timings) == 3
    assert all(AUDIO_DELAY_S * 0.9 <= timing.ttfa_s <= timing.total_s for timing in timings)
    assert fake_endpoint.sessions == 3
    kinds = [message["type"] for message in fake_endpoint.received]
    assert kinds.count("synthesize") == 3
    assert kinds.count("close") == 3
    # All three requests went out before any session was closed.
    assert kinds[:3] == ["synthesize"] * 3


def test_cancel_after_first_audio_cancels_that_request_and_settles(fake_endpoint: FakeEndpoint) -> None:
    fake_endpoint.honour_cancel = True
    started = time.perf_counter()
    timing = against(
        fake_endpoint,
        lambda url: measure_request(url, "Long text. Four sentences.", cancel_after_first_audio=True),
    )
    elapsed = time.perf_counter() - started
    assert timing.cancelled
    assert AUDIO_DELAY_S * 0.9 <= timing.ttfa_s <= timing.total_s
    assert timing.audio_bytes == 4800
    assert timing.heard_s == timing.ttfa_s  # audible from its first sample
    synthesize, cancel, close = fake_endpoint.received
    assert cancel == {"type": "cancel", "request_id": synthesize["request_id"]}
    assert close == {"type": "close"}
    # It waited about one more time-to-first-audio before returning (the endpoint's leftover segment).
    assert elapsed >= 2 * timing.ttfa_s
