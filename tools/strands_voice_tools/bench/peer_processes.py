"""The peers of ``bench --peers`` as processes: the real endpoint, timed over Leg 1, and kokoro-onnx in
:mod:`.peer_kokoro_onnx`'s process, one JSON line per request each way; and the systems of ``bench --talk``'s
calls (:class:`CallPeer`), with the resident memory of each one's process tree (:class:`MemoryWatch`)."""

from __future__ import annotations

import abc
import asyncio
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = [
    "CallPeer",
    "EndpointPeer",
    "KokoroOnnxPeer",
    "MemoryWatch",
    "Peer",
    "PeerRun",
    "free_port",
    "tree_rss_mb",
]

#: Seconds a peer may take to load its model and warm up.
READY_TIMEOUT_S: Final = 600.0
#: Seconds one request may take.
REQUEST_TIMEOUT_S: Final = 300.0


@dataclass(frozen=True, slots=True)
class PeerRun:
    """One request to one peer.

    Attributes:
        first_audio_s: From the request to its first audio.
        first_heard_s: From the request to its first audible sound (a player starting at the first audio).
        total_s: From the request to its last audio.
        audio_s: Seconds of audio.
    """

    first_audio_s: float
    first_heard_s: float | None
    total_s: float
    audio_s: float


class Peer(Protocol):
    """A TTS system under test, in its own process."""

    name: str
    load_s: float | None

    @property
    def pid(self) -> int: ...

    async def start(self) -> None: ...

    async def measure(self, text: str, voice: str) -> PeerRun: ...

    async def stop(self) -> None: ...


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _stop(proc: asyncio.subprocess.Process | None) -> None:
    """Terminate ``proc`` (kill it when it does not exit within 15 s) and reap it."""
    if proc is None or proc.returncode is not None:
        return
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), 15.0)
    except TimeoutError:
        proc.kill()
        await proc.wait()


@dataclass
class _PeerProcess(abc.ABC):
    """What both peers share: a child process, started and timed until it is ready, then stopped."""

    load_s: float | None = None
    #: Variables added to the process's environment (an emulated instruction set: ``bench.isa``).
    environ: dict[str, str] = field(default_factory=dict)
    _proc: asyncio.subprocess.Process | None = None
    _started: float = 0.0

    @property
    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.environ}

    @property
    def pid(self) -> int:
        """The peer's process id."""
        assert self._proc is not None
        return self._proc.pid

    async def start(self) -> None:
        """Start the process and wait (bounded) until it is ready; :attr:`load_s` is how long that took."""
        await self.spawn()
        await self.until_ready()

    async def spawn(self) -> None:
        """Start the process (:attr:`pid` is known from here on)."""
        self._started = time.perf_counter()
        self._proc = await self._spawn()

    async def until_ready(self) -> None:
        """Wait (bounded) until the spawned process is ready; sets :attr:`load_s`."""
        assert self._proc is not None
        await self._ready(self._proc, self._started)
        self.load_s = round(time.perf_counter() - self._started, 3)

    @abc.abstractmethod
    async def _spawn(self) -> asyncio.subprocess.Process:
        """Start the peer's process."""

    @abc.abstractmethod
    async def _ready(self, proc: asyncio.subprocess.Process, started: float) -> None:
        """Return once ``proc`` (started at ``perf_counter()`` time ``started``) is ready.

        Raises:
            StrandsVoiceError: it exited, failed or was not ready within :data:`READY_TIMEOUT_S`.
        """

    async def stop(self) -> None:
        """Stop the process."""
        await _stop(self._proc)


@dataclass
class EndpointPeer(_PeerProcess):
    """The real endpoint as its own process, timed over Leg 1 from this one."""

    name: str = "strands-voice"
    port: int = field(default_factory=free_port)

    async def _spawn(self) -> asyncio.subprocess.Process:
        command = ["-m", "kokoro_endpoint.cli", "--engine", "onnx", "--port", str(self.port)]
        return await asyncio.create_subprocess_exec(
            sys.executable,
            *command,
            "--log-level",
            "warning",
            stdout=asyncio.subprocess.DEVNULL,
            env=self._env,
        )

    async def _ready(self, proc: asyncio.subprocess.Process, started: float) -> None:
        """Poll ``/ping`` until it says the engine is loaded and warm."""
        import httpx

        async with httpx.AsyncClient(timeout=2.0) as client:
            while time.perf_counter() - started < READY_TIMEOUT_S:
                if proc.returncode is not None:
                    raise StrandsVoiceError(f"the endpoint exited with {proc.returncode}")
                try:
                    if (await client.get(f"http://127.0.0.1:{self.port}/ping")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.25)
        raise StrandsVoiceError(f"the endpoint was not ready within {READY_TIMEOUT_S:.0f} s")

    async def measure(self, text: str, voice: str) -> PeerRun:
        """One request on a new Leg 1 session (its opening is not timed), to ``synthesis_complete``."""
        from strands_voice_tools.bench.endpoint_probe import measure_request

        url = f"ws://127.0.0.1:{self.port}/invocations-bidirectional-stream"
        timing = await measure_request(url, text, voice=voice, timeout_s=REQUEST_TIMEOUT_S)
        return PeerRun(timing.ttfa_s, timing.heard_s, timing.total_s, timing.audio_bytes / (2 * SAMPLE_RATE))


@dataclass
class KokoroOnnxPeer(_PeerProcess):
    """kokoro-onnx in :mod:`.peer_kokoro_onnx`'s process, one JSON line per request each way."""

    name: str = "kokoro-onnx"
    endpoint_graph: bool = False

    async def _spawn(self) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "strands_voice_tools.bench.peer_kokoro_onnx",
            *(["--endpoint-graph"] if self.endpoint_graph else []),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=self._env,
        )

    async def _ready(self, proc: asyncio.subprocess.Process, started: float) -> None:
        """Wait for the worker's ``ready`` line."""
        await self._read(READY_TIMEOUT_S)

    async def measure(self, text: str, voice: str) -> PeerRun:
        """One ``create_stream`` call in the worker, streamed to its end."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write((json.dumps({"text": text, "voice": voice}) + "\n").encode())
        await self._proc.stdin.drain()
        reply = await self._read(REQUEST_TIMEOUT_S)
        return PeerRun(reply["first_audio_s"], reply["first_heard_s"], reply["total_s"], reply["audio_s"])

    async def _read(self, timeout_s: float) -> dict[str, Any]:
        """The worker's next JSON line, waited for at most ``timeout_s``.

        Raises:
            StrandsVoiceError: the worker failed, exited or overran.
        """
        assert self._proc is not None and self._proc.stdout is not None
        try:
            line = await asyncio.wait_for(self._proc.stdout.readline(), timeout_s)
        except TimeoutError:
            raise StrandsVoiceError(f"kokoro-onnx did not answer within {timeout_s:.0f} s") from None
        if not line:
            raise StrandsVoiceError(f"the kokoro-onnx worker exited with {await self._proc.wait()}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise StrandsVoiceError(f"kokoro-onnx failed: {reply['error']}")
        return reply

    async def stop(self) -> None:
        """Close the worker's input (it exits at the end of it), then stop it if it has not."""
        if self._proc is not None and self._proc.stdin is not None and self._proc.returncode is None:
            self._proc.stdin.close()
            try:
                await asyncio.wait_for(self._proc.wait(), 15.0)
            except TimeoutError:
                pass
        await super().stop()


def _children(pid: int) -> list[int]:
    """``pid``'s child processes (from every thread's ``children`` list)."""
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text(encoding="utf-8").split()]
    except (OSError, ValueError):
        pass
    return found


def tree_rss_mb(pid: int) -> float | None:
    """The resident memory of ``pid`` and all its descendants now, in MB (None where /proc has no such
    process)."""
    total_kb, seen, stack = 0, False, [pid]
    while stack:
        current = stack.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text(encoding="utf-8")
        except OSError:
            continue
        seen = True
        total_kb += next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0
        )
        stack += _children(current)
    return round(total_kb / 1024, 1) if seen else None


class MemoryWatch:
    """Samples a process tree's resident memory (:func:`tree_rss_mb`) every ``period_s``; keeps the peak."""

    def __init__(self, pid: int, period_s: float = 0.2) -> None:
        self.pid = pid
        self.peak_mb: float | None = None
        self._period_s = period_s
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> float | None:
        """Take one sample now (and keep it if it is the peak)."""
        now = tree_rss_mb(self.pid)
        if now is not None and (self.peak_mb is None or now > self.peak_mb):
            self.peak_mb = now
        return now

    def start(self) -> None:
        """Sample in the background until :meth:`stop`."""
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self._period_s)

    async def stop(self) -> float | None:
        """Stop sampling; returns the peak."""
        if self._task is not None:
            await cancel_and_wait([self._task], 5.0)
        return self.peak_mb


@dataclass
class CallPeer(_PeerProcess):
    """A system under ``bench --talk``'s calls: ``python -m <command>``, ready at its JSON line
    ``{"ready": true, "url": ...}`` on stdout (the WebSocket its callers open)."""

    name: str = ""
    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    _drain: asyncio.Task[None] | None = None

    async def _spawn(self) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            *self.command,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, **self.env},
        )

    async def _ready(self, proc: asyncio.subprocess.Process, started: float) -> None:
        """Wait for the ready line (other output before it is passed over) and keep its URL; the rest of
        the worker's output is read and dropped from then on, so that it never blocks on a full pipe."""
        assert proc.stdout is not None
        while True:
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), READY_TIMEOUT_S)
            except TimeoutError:
                raise StrandsVoiceError(f"{self.name} was not ready within {READY_TIMEOUT_S:.0f} s") from None
            if not line:
                raise StrandsVoiceError(f"{self.name} exited with {await proc.wait()} before it was ready")
            if line.startswith(b'{"ready"'):
                self.url = json.loads(line)["url"]
                self._drain = asyncio.create_task(self._drop_output(proc.stdout))
                return

    @staticmethod
    async def _drop_output(stdout: asyncio.StreamReader) -> None:
        while await stdout.read(65536):
            pass

    async def stop(self) -> None:
        """Stop the worker and its output's reader."""
        await super().stop()
        if self._drain is not None:
            await cancel_and_wait([self._drain], 5.0)
