"""Helpers for the endpoint tests: the shared Leg 1 reader (``leg1_client``) and engine wrappers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from kokoro_endpoint.text import split_segments

from support.leg1_client import Reply, collect, replies
from support.whisper import whisper_input

__all__ = ["RecordingEngine", "Reply", "collect", "replies", "whisper_input"]


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
