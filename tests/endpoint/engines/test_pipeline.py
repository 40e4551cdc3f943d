"""Narrow unit tests of the session pipeline and the scheduler with stand-ins (timing made deterministic).

The stand-in engine sleeps a fixed time per segment and the stand-in WebSocket sends slowly, like a
far-away client; the real engine and server are covered by the other endpoint tests.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.ws_session import EndpointSession
from kokoro_endpoint.settings import Settings


class SleepyEngine:
    """Each segment takes ``segment_s`` of (thread) time and is one second of silence-ish audio."""

    name = "sleepy"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})

    def __init__(self, segment_s: float = 0.1) -> None:
        self.segment_s = segment_s
        self.log: list[tuple[float, str, int]] = []  # (done at, text, segment index)
        self.started: dict[str, float] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        pass

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        def segments() -> Iterator[npt.NDArray[np.float32]]:
            with self._lock:
                self.started.setdefault(text, time.monotonic())
            for index in range(text.count(".")):
                time.sleep(self.segment_s)
                with self._lock:
                    self.log.append((time.monotonic(), text, index))
                yield np.full(24_000, 0.01, dtype=np.float32)

        return segments()


class SlowWebSocket:
    """Enough of starlette's WebSocket for EndpointSession: scripted input, slow recorded output."""

    def __init__(self, messages: list[str], send_s: float) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for message in messages:
            self.incoming.put_nowait({"type": "websocket.receive", "bytes": message.encode()})
        self.send_s = send_s
        self.sent: list[tuple[float, str | bytes]] = []
        self.closed_with: int | None = None

    async def receive(self) -> dict[str, Any]:
        return await self.incoming.get()

    async def send_text(self, data: str) -> None:
        self.sent.append((time.monotonic(), data))

    async def send_bytes(self, data: bytes) -> None:
        await asyncio.sleep(self.send_s)
        self.sent.append((time.monotonic(), data))

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed_with = code
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": code})

    def controls(self) -> list[tuple[float, dict[str, Any]]]:
        return [(at, json.loads(data)) for at, data in self.sent if isinstance(data, str)]


def _run_session(ws: SlowWebSocket, engine: SleepyEngine, settings: Settings) -> None:
    async def run() -> None:
        scheduler = SynthesisScheduler(settings.synthesis_workers)
        try:
            await asyncio.wait_for(EndpointSession(ws, engine, scheduler, settings).run(), 30)  # type: ignore[arg-type]
        finally:
            scheduler.shutdown()

    asyncio.run(run())


def test_next_request_is_synthesized_while_the_previous_one_is_sent() -> None:
    engine = SleepyEngine(segment_s=0.05)
    ws = SlowWebSocket(
        [
            json.dumps({"text": "One. Two. Three.", "request_id": "n"}),
            json.dumps({"text": "Four. Five.", "request_id": "n1"}),
            json.dumps({"type": "close"}),
        ],
        send_s=0.2,  # 3 s of audio in 24,000-byte frames: 6 frames, 1.2 s to send
    )
    _run_session(ws, engine, Settings(audio_frame_bytes=24_000))
    controls = ws.controls()
    completes = {c["request_id"]: at for at, c in controls if c["type"] == "synthesis_complete"}
    n_complete = completes["n"]
    # The endpoint asks the engine for one sentence at a time.
    assert engine.started["Four."] < n_complete, "N+1 waited for N's audio to be sent"
    # Both of N+1's segments were ready before N finished sending: no gap for the listener.
    n1_done = max(at for at, text, _ in engine.log if text in {"Four.", "Five."})
    assert n1_done < n_complete
    assert ws.closed_with == 1000
    # Order on the wire: all of n, then all of n1.
    kinds = [(c["type"], c["request_id"]) for _, c in controls]
    assert kinds == [
        ("synthesis_start", "n"),
        ("synthesis_complete", "n"),
        ("synthesis_start", "n1"),
        ("synthesis_complete", "n1"),
    ]


def test_pipeline_depth_bounds_how_far_synthesis_runs_ahead() -> None:
    engine = SleepyEngine(segment_s=0.01)
    texts = [f"Request {i}." for i in range(4)]
    ws = SlowWebSocket(
        [json.dumps({"text": t, "request_id": str(i)}) for i, t in enumerate(texts)]
        + [json.dumps({"type": "close"})],
        send_s=0.3,
    )
    _run_session(ws, engine, Settings(pipeline_depth=2, audio_frame_bytes=48_000))
    controls = ws.controls()
    completes = {c["request_id"]: at for at, c in controls if c["type"] == "synthesis_complete"}
    # Request 2 may start only once request 0 has been fully sent (one sending + one ahead).
    assert engine.started[texts[2]] >= completes["0"]
    assert engine.started[texts[3]] >= completes["1"]


def test_fifo_scheduler_serves_streams_in_turn() -> None:
    order: list[str] = []

    def work(name: str, steps: int) -> Iterator[str]:
        for index in range(steps):
            time.sleep(0.01)
            order.append(f"{name}{index}")
            yield f"{name}{index}"

    async def consume(scheduler: SynthesisScheduler, name: str, steps: int, delay: float) -> None:
        await asyncio.sleep(delay)
        stream = scheduler.stream(work(name, steps))
        while await stream.next() is not None:
            pass

    async def run() -> None:
        scheduler = SynthesisScheduler(workers=1, policy="fifo")
        try:
            await asyncio.gather(consume(scheduler, "a", 6, 0), consume(scheduler, "b", 3, 0.025))
        finally:
            scheduler.shutdown()

    asyncio.run(run())
    b_first = order.index("b0")
    # b arrived while a was running: it waits for at most a's current step, then they alternate.
    assert b_first <= 3
    assert order[b_first : b_first + 5] == ["b0", f"a{b_first}", "b1", f"a{b_first + 1}", "b2"]


def test_closing_a_stream_mid_step_closes_the_generator_after_that_step() -> None:
    state: list[str] = []

    def work() -> Iterator[int]:
        try:
            for index in range(100):
                time.sleep(0.05)
                state.append(f"step{index}")
                yield index
        finally:
            state.append("closed")

    async def run() -> None:
        scheduler = SynthesisScheduler(workers=1)
        stream = scheduler.stream(work())
        try:
            assert await stream.next() == 0
            task = asyncio.create_task(stream.next())
            await asyncio.sleep(0.01)  # the second step is running on the thread
            task.cancel()
            stream.close()
            await asyncio.sleep(0.3)
        finally:
            scheduler.shutdown()

    asyncio.run(run())
    assert state == ["step0", "step1", "closed"]
