"""Helpers for the endpoint tests: a Leg 1 WebSocket reader that checks ordering, and engine wrappers."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from kokoro_endpoint.text import split_segments
from websockets.asyncio.client import ClientConnection

TERMINAL = {"synthesis_complete", "synthesis_cancelled", "error"}


@dataclass
class Frame:
    """One frame received: a control object or audio, with its arrival time (monotonic)."""

    at: float
    control: dict[str, Any] | None = None
    audio: bytes | None = None


@dataclass
class Reply:
    """What one request got, in order."""

    request_id: str | None
    start: dict[str, Any] | None = None
    audio: bytearray = field(default_factory=bytearray)
    audio_frames: int = 0
    end: dict[str, Any] | None = None
    first_audio_at: float | None = None
    end_at: float | None = None

    @property
    def kind(self) -> str | None:
        return None if self.end is None else str(self.end["type"])


async def collect(ws: ClientConnection, terminals: int, limit_s: float = 240.0) -> list[Frame]:
    """Read frames until ``terminals`` terminal control frames arrived (complete/cancelled/error)."""
    frames: list[Frame] = []
    seen = 0

    async def read() -> None:
        nonlocal seen
        while seen < terminals:
            message = await ws.recv()
            now = time.monotonic()
            if isinstance(message, str):
                control = json.loads(message)
                frames.append(Frame(now, control=control))
                if control["type"] in TERMINAL:
                    seen += 1
            else:
                frames.append(Frame(now, audio=message))

    await asyncio.wait_for(read(), limit_s)
    return frames


def replies(frames: list[Frame]) -> list[Reply]:
    """Group frames by request, asserting the Leg 1 order: start, audio only, then one terminal frame."""
    out: list[Reply] = []
    current: Reply | None = None
    for frame in frames:
        if frame.audio is not None:
            assert current is not None and current.start is not None, "audio outside a request"
            if current.first_audio_at is None:
                current.first_audio_at = frame.at
            current.audio += frame.audio
            current.audio_frames += 1
            continue
        control = frame.control
        assert control is not None
        kind = control["type"]
        if kind == "synthesis_start":
            assert current is None, f"request {control['request_id']} started inside another"
            current = Reply(control["request_id"], start=control)
        elif kind in TERMINAL:
            rid = control.get("request_id")
            if current is None:
                # A request answered without audio (error, or cancelled before it started).
                out.append(Reply(rid, end=control, end_at=frame.at))
                continue
            assert rid == current.request_id, f"{kind} for {rid} inside {current.request_id}"
            current.end = control
            current.end_at = frame.at
            out.append(current)
            current = None
        else:
            raise AssertionError(f"unexpected frame {control}")
    assert current is None, "a request never ended"
    return out


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
