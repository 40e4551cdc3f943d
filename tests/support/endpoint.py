"""Helpers for the endpoint tests: the shared Leg 1 reader (``leg1_client``) and engine wrappers."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from kokoro_endpoint.text.segmentation import split_segments

from support.leg1_client import Reply, collect, replies
from support.whisper import whisper_input

__all__ = [
    "SEGMENT_SAMPLES",
    "CountingEngine",
    "HeldWebSocket",
    "RecordingEngine",
    "Reply",
    "collect",
    "replies",
    "whisper_input",
]

SEGMENT_SAMPLES = 24_000  # one second: 48,000 bytes of pcm16, two 24,000-byte frames


class RecordingEngine:
    """Delegates to a real engine and records when each segment of each text was produced."""

    def __init__(self, engine: Any, fail_on: str | None = None) -> None:
        self._engine = engine
        self.name = engine.name
        self.sample_rate = engine.sample_rate
        self.default_voice = engine.default_voice
        self.voices = engine.voices
        self.fail_on = fail_on
        self.events: list[tuple[float, str, str]] = []  # (time, text, "start" | "segment" | "closed")
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self._engine.warm_up()

    def _record(self, text: str, what: str) -> None:
        with self._lock:
            self.events.append((time.monotonic(), text, what))

    def mark(self) -> int:
        """A point in the record: queries given ``since=mark`` ignore what came before (earlier tests)."""
        with self._lock:
            return len(self.events)

    def _of(self, text: str, what: str, since: int) -> list[tuple[float, str]]:
        # The endpoint asks the engine for a request's sentences (and phrases) one call at a time.
        pieces = set(split_segments(text))
        with self._lock:
            return [(at, t) for at, t, kind in self.events[since:] if t in pieces and kind == what]

    def segments_of(self, text: str, since: int = 0) -> list[float]:
        """When each segment of the request ``text`` was produced."""
        return [at for at, _ in self._of(text, "segment", since)]

    def closed(self, text: str, since: int = 0) -> bool:
        """Whether the request ``text`` started and every engine call it made has ended."""
        started = [t for _, t in self._of(text, "start", since)]
        closed = [t for _, t in self._of(text, "closed", since)]
        return bool(started) and len(closed) == len(started)

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        inner = self._engine.synthesize(text, voice, speed)
        return self._wrap(text, inner)

    def _wrap(self, text: str, inner: Iterator[npt.NDArray[np.float32]]) -> Iterator[npt.NDArray[np.float32]]:
        self._record(text, "start")
        try:
            if self.fail_on is not None and self.fail_on in text:
                raise RuntimeError("boom at /secret/path/model.onnx")
            for segment in inner:
                self._record(text, "segment")
                yield segment
        finally:
            self._record(text, "closed")


class HeldSession:
    """Wraps an onnxruntime session: its second call is held (``entered`` set) until ``release`` (at most
    ``guard_s``), then runs with the engine's own run options, so onnxruntime itself decides whether
    ``terminate`` was set."""

    def __init__(self, session: Any, guard_s: float) -> None:
        self._session = session
        self._guard_s = guard_s
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def run(self, outputs: Any, feeds: Any, options: Any = None) -> Any:
        self.calls += 1
        if self.calls == 2:
            self.entered.set()
            self.release.wait(self._guard_s)
        return self._session.run(outputs, feeds, options)


async def until_one_step_is_queued(scheduler: Any, guard_s: float) -> None:
    """Wait (at most ``guard_s``) until the scheduler holds exactly one queued step."""
    async with asyncio.timeout(guard_s):
        while scheduler.counters().queued_steps != 1:  # noqa: ASYNC110 (a counter, not an event)
            await asyncio.sleep(0.005)


class CountingEngine:
    """One segment per word, made quickly; counts the segments made per text."""

    name = "counting"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})

    def __init__(self, segment_s: float = 0.002) -> None:
        self.segment_s = segment_s
        self.segments: dict[str, int] = {}
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        pass

    def made(self, text: str) -> int:
        with self._lock:
            return self.segments.get(text, 0)

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        for _word in text.split():
            time.sleep(self.segment_s)
            with self._lock:
                self.segments[text] = self.segments.get(text, 0) + 1
            yield np.full(SEGMENT_SAMPLES, 0.01, dtype=np.float32)


class HeldWebSocket:
    """Enough of starlette's WebSocket for EndpointSession: input pushed by the test, sending held
    by a gate."""

    def __init__(self) -> None:
        self.incoming: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.gate = asyncio.Event()  # closed: send_bytes blocks, like a full socket
        self.audio_bytes = 0
        self.controls: list[dict[str, Any]] = []
        self.closed_with: int | None = None

    def push(self, message: dict[str, Any]) -> None:
        self.incoming.put_nowait({"type": "websocket.receive", "text": json.dumps(message)})

    def disconnect(self) -> None:
        self.incoming.put_nowait({"type": "websocket.disconnect", "code": 1006})

    async def receive(self) -> dict[str, Any]:
        return await self.incoming.get()

    async def send_text(self, data: str) -> None:
        self.controls.append(json.loads(data))

    async def send_bytes(self, data: bytes) -> None:
        await self.gate.wait()
        self.audio_bytes += len(data)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed_with = code
        self.disconnect()

    def ended(self, request_id: str) -> dict[str, Any] | None:
        ends = {"synthesis_complete", "synthesis_cancelled", "error"}
        return next(
            (c for c in self.controls if c.get("request_id") == request_id and c["type"] in ends), None
        )
