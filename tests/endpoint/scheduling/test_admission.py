"""Admission that keeps its promises, against the endpoint served on loopback with an engine of known rate.

The engine makes 0.25 s of audio per step and sleeps 0.125 s doing it: a load of at least 0.5 (a sleep is a
lower bound on a step's time), so the default rule (0.8 of one worker) feeds one listener at a time, and a
newcomer is refused while another is engaged (a 4 s answer: synthesized, then played, then the hold).
What is asserted follows from that bound, never from how fast the machine is: a newcomer is refused with
``busy`` before any audio, and the library's retry then serves it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from strands_voice_protocol.frames import (
    ErrorFrame,
    SynthesisStart,
    Synthesize,
    decode_server_control,
    encode_client_message,
)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.timeout(180)

GUARD_S = 60.0
STEP_AUDIO_S = 0.25
STEP_COMPUTE_S = 0.125
STEPS = 16  # a 4 s answer


class KnownRateEngine:
    """Each segment: ``STEP_AUDIO_S`` of tone made in at least ``STEP_COMPUTE_S`` (load >= 0.5)."""

    name = "known-rate"
    sample_rate = 24_000
    default_voice = "tone"
    voices = frozenset({"tone"})

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        samples = int(self.sample_rate * STEP_AUDIO_S)
        tone = (0.2 * np.sin(np.arange(samples, dtype=np.float32) * 0.05)).astype(np.float32)
        for _ in range(STEPS):
            time.sleep(STEP_COMPUTE_S)
            yield tone


def _served() -> Any:
    from kokoro_endpoint.engines.silence import SilencePolicy
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    # The engine's audio as it is (no pauses inserted: they are audio made without compute).
    settings = Settings(silence=SilencePolicy(trim=False))
    return running_server(create_app(engine=KnownRateEngine(), settings=settings))  # type: ignore[arg-type]


def test_the_rate_is_measured_at_start_up() -> None:
    with _served() as server:
        state = server._server.config.app.state.endpoint
        load = state.scheduler.counters().load
        assert load >= STEP_COMPUTE_S / STEP_AUDIO_S
        assert state.scheduler.rule.listeners_fed(load) == 1


def test_a_newcomer_the_engine_cannot_feed_is_refused_before_any_audio() -> None:
    with _served() as server:

        async def run() -> None:
            async with connect(server.ws_url) as first:
                await first.send(encode_client_message(Synthesize(text="one two", request_id="first")))
                start = decode_server_control(await asyncio.wait_for(first.recv(), GUARD_S))
                assert isinstance(start, SynthesisStart)
                async with connect(server.ws_url) as second:
                    with contextlib.suppress(ConnectionClosed):  # refused at once, on connecting
                        await second.send(
                            encode_client_message(Synthesize(text="three", request_id="second"))
                        )
                    reply = await asyncio.wait_for(second.recv(), GUARD_S)
                    assert isinstance(reply, str), "audio before the refusal"
                    refused = decode_server_control(reply)
                    assert isinstance(refused, ErrorFrame) and refused.code == "busy", refused

        asyncio.run(run())


def test_four_staggered_listeners_are_each_served_whole_refused_ones_on_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from strands_voice.session import AudioChunk, RequestCompleted, TTSSession
    from strands_voice.transports import WebSocketTransport

    caplog.set_level(logging.INFO, logger="kokoro_endpoint")
    expected = STEPS * int(KnownRateEngine.sample_rate * STEP_AUDIO_S) * 2

    async def listener(url: str, delay_s: float) -> int:
        await asyncio.sleep(delay_s)
        received = 0
        async with TTSSession(WebSocketTransport(url)) as session:
            await session.synthesize("an answer")
            await session.finish()
            async for event in session:
                if isinstance(event, AudioChunk):
                    received += len(event.data)
                elif isinstance(event, RequestCompleted):
                    break
        return received

    with _served() as server:

        async def run() -> list[int]:
            async with asyncio.timeout(150):
                return list(await asyncio.gather(*(listener(server.ws_url, 0.3 * n) for n in range(4))))

        assert asyncio.run(run()) == [expected] * 4  # every one whole: no sample lost or given twice
    refusals = [r for r in caplog.records if "refused" in r.getMessage()]
    assert refusals, "the engine feeds one at a time: the others must have been refused"


@pytest.mark.timeout(900)
def test_four_staggered_listeners_on_the_real_engine_are_each_served(endpoint_server: Any) -> None:
    # The real engine with the default settings: whoever is admitted first, every listener's answer comes
    # whole through the library's retry (how long it takes is the bench's: scripts/measure_admission.py).
    # The retry's deadline is long: on a slow machine the engine feeds one listener at a time.
    from strands_voice.session import AudioChunk, RequestCompleted, RetryPolicy, TTSSession
    from strands_voice.transports import WebSocketTransport

    patient = RetryPolicy(deadline_s=600.0)

    async def listener(delay_s: float) -> tuple[int, int]:
        await asyncio.sleep(delay_s)
        received = 0
        transport = WebSocketTransport(endpoint_server.ws_url)
        async with TTSSession(transport, retry=patient, silence_timeout=300.0) as session:
            await session.synthesize("Thanks for calling, how can I help you today?")
            await session.finish()
            async for event in session:
                if isinstance(event, AudioChunk):
                    received += len(event.data)
                elif isinstance(event, RequestCompleted):
                    return received, event.audio_bytes
        return received, -1

    async def run() -> list[tuple[int, int]]:
        async with asyncio.timeout(800):
            return list(await asyncio.gather(*(listener(0.7 * n) for n in range(4))))

    for received, completed in asyncio.run(run()):
        assert received > 0 and received == completed
