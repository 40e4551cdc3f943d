"""Helpers for the reliability tests: a Leg 1 client that checks every reply, engine wrappers, a real
endpoint process, memory readings and the leak check for messages sent to remote callers."""

from __future__ import annotations

import asyncio
import json
import math
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
from websockets.asyncio.client import ClientConnection, connect

from support.leg1_client import Frame, Reply, collect, replies

BYTES_PER_SECOND = 48_000
#: Sessions the load test opens at once (the issue's 32).
LOAD_SESSIONS = 32

# What must never reach a remote caller: exception text, stack traces, file paths, internals.
LEAK_MARKERS = (
    "Traceback",
    'File "',
    "/work",
    "/home",
    "/usr/",
    "/tmp",
    "site-packages",
    ".py",
    "Error:",
    "Exception",
    "errno",
    "0x",
)


def assert_no_leak(text: str) -> None:
    """Fail if ``text`` (a response body or message) carries exception text, a trace or a path."""
    for marker in LEAK_MARKERS:
        assert marker not in text, f"{marker!r} leaked to the caller in {text[:300]!r}"
    # An exception class name such as "ValueError" or "KeyError" in a message is exception text too.
    for word in text.replace('"', " ").replace("'", " ").split():
        assert not (word.endswith("Error") and word[:1].isupper()), f"exception name in {text[:300]!r}"


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MiB."""
    import psutil

    return float(psutil.Process(pid or os.getpid()).memory_info().rss) / (1024 * 1024)


# ---- a Leg 1 client that checks what it receives ---------------------------------------------------


async def read_until(ws: ClientConnection, terminals: int, limit_s: float) -> list[Frame]:
    """Frames until ``terminals`` terminal frames, each terminal frame checked for leaked internals."""
    return await collect(ws, terminals, limit_s, check_terminal=assert_no_leak)


def group_replies(frames: Sequence[Frame]) -> list[Reply]:
    """Group frames per request, asserting the Leg 1 order (``leg1_client.replies``)."""
    return replies(frames)


def check_complete(reply: Reply) -> None:
    """A completed request's bookkeeping: every audio byte arrived once, bytes match the duration."""
    assert reply.end is not None and reply.kind == "synthesis_complete", reply.end
    assert reply.start is not None and reply.start["format"] == "pcm16"
    assert reply.start["sample_rate"] == 24_000 and reply.start["channels"] == 1
    size = len(reply.audio)
    assert size > 0 and size % 2 == 0
    assert reply.end["audio_bytes"] == size, (reply.end, size)
    assert math.isclose(reply.end["total_duration_s"] * BYTES_PER_SECOND, size, abs_tol=1.0), reply.end


def synthesize_frame(text: str, request_id: str, **extra: Any) -> str:
    return json.dumps({"type": "synthesize", "text": text, "request_id": request_id, **extra})


@dataclass
class SessionResult:
    """One load-test session: its replies and timings (seconds, monotonic)."""

    replies: list[Reply]
    started_at: float
    first_audio_s: float | None
    ended_s: float


async def run_session(url: str, texts: Sequence[str], prefix: str, limit_s: float) -> SessionResult:
    """Open a session, send every text at once (pipelined), read every reply, close with ``close``."""
    started = time.monotonic()
    async with connect(url, open_timeout=limit_s, close_timeout=5, max_size=2**22) as ws:
        for index, text in enumerate(texts):
            await ws.send(synthesize_frame(text, f"{prefix}-{index}"))
        frames = await read_until(ws, len(texts), limit_s)
        await ws.send(json.dumps({"type": "close"}))
        with_timeout = asyncio.wait_for(ws.wait_closed(), 10)
        await with_timeout
        assert ws.close_code == 1000, ws.close_code
    replies = group_replies(frames)
    firsts = [r.first_audio_at for r in replies if r.first_audio_at is not None]
    return SessionResult(
        replies=replies,
        started_at=started,
        first_audio_s=(min(firsts) - started) if firsts else None,
        ended_s=time.monotonic() - started,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


# ---- engines -------------------------------------------------------------------------------------------


class CountingEngine:
    """The real engine, instrumented: counts the synthesis calls started and the segments produced.

    Every call and segment goes to the wrapped engine; this only watches, so tests can see whether
    server-side work stops when a caller goes away.
    """

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.name = engine.name
        self.sample_rate = engine.sample_rate
        self.default_voice = engine.default_voice
        self.voices = engine.voices
        self._lock = threading.Lock()
        self.calls = 0
        self.segments = 0

    def warm_up(self) -> None:
        self._engine.warm_up()

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        with self._lock:
            self.calls += 1
        for segment in self._engine.synthesize(text, voice, speed):
            with self._lock:
                self.segments += 1
            yield segment


class ToneEngine:
    """A fast synthetic engine for the flow-control tests ONLY: one ``seconds_per_word`` tone per word.

    Kokoro on two shared cores is too slow to outrun a stalled consumer by tens of megabytes within a
    test's time; this one produces audio as fast as memory allows, so the endpoint's backpressure (or its
    absence) shows at once. Never used where the real speech path is under test.
    """

    name = "tone"
    sample_rate = 24_000
    default_voice = "tone"
    voices = frozenset({"tone"})

    def __init__(self, seconds_per_word: float = 10.0) -> None:
        self._samples = int(self.sample_rate * seconds_per_word)
        self._lock = threading.Lock()
        self.calls = 0
        self.segments = 0

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        with self._lock:
            self.calls += 1
        for _word in text.split():
            tone = (0.2 * np.sin(np.arange(self._samples, dtype=np.float32) * 0.05)).astype(np.float32)
            with self._lock:
                self.segments += 1
            yield tone


def wait_for(predicate: Any, timeout_s: float, interval_s: float = 0.05) -> bool:
    """Poll ``predicate()`` until true or ``timeout_s`` passed (bounded); its last value."""
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(interval_s)


# ---- the example app over HTTP/SSE ----------------------------------------------------------------------


def sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """Leg 3 events of a streaming response, decoded with the incremental SSE decoder."""
    from strands_voice_protocol.sse import SSEDecoder

    decoder = SSEDecoder()
    for data in response.iter_raw():
        for event in decoder.feed(data):
            yield event.json()
    for event in decoder.flush():
        yield event.json()


# ---- a TCP proxy that can stall the byte stream ----------------------------------------------------------


class StallingProxy:
    """A loopback TCP proxy (own thread, own loop) that can hold the server->client bytes for a while.

    Once ``stall_after_bytes`` bytes have gone to the client, the next bytes wait ``stall_s`` seconds
    (buffered, not dropped), once: the slow network of a congested link. Counts the connections it
    accepted, so a test can tell that the client rode the stall out instead of reconnecting.
    """

    def __init__(self, upstream_port: int, *, stall_after_bytes: int, stall_s: float) -> None:
        self.upstream_port = upstream_port
        self.stall_after_bytes = stall_after_bytes
        self.stall_s = stall_s
        self.connections = 0
        self.stalls = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="stalling-proxy", daemon=True)

    def __enter__(self) -> StallingProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("the proxy did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/invocations-bidirectional-stream"

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())
        self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            sent = 0

            async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, downstream: bool) -> None:
                nonlocal sent
                try:
                    while data := await src.read(65536):
                        if downstream:
                            if self.stalls == 0 and sent >= self.stall_after_bytes:
                                self.stalls += 1
                                await asyncio.sleep(self.stall_s)  # the bytes wait; nothing is lost
                            sent += len(data)
                        dst.write(data)
                        await dst.drain()
                except (ConnectionError, OSError):
                    pass
                finally:
                    dst.close()

            both = [
                asyncio.ensure_future(pump(reader, up_writer, False)),
                asyncio.ensure_future(pump(up_reader, writer, True)),
            ]
            await asyncio.wait(both)

        def track(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(handle(reader, writer))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        server = await asyncio.start_server(track, "127.0.0.1", 0)
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        async with server:
            await self._stop.wait()
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
