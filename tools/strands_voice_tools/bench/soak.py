"""A soak of calls: ``strands-voice bench --soak 100``: calls one after another, then 4 at a time, each two
turns and a hang-up, against the example app in its own process; what the app holds after them.

The app is the ``bench --talk`` worker (:data:`~.talk_calls.SYSTEMS` ``strands-voice-ws``: the app's
``WS /ws`` with its default listener, the Kokoro endpoint in the same process), its temporary directory a
fresh one of its own. The first ten calls go one after another, their last four at once; then the rest
one after another, then as many again 4 at a time. Each call sends ``start``, half a second of the
microphone's silence, then two typed turns (each waits for its answer's ``agent_end``: the real endpoint
speaks the stand-in's short answer), then hangs up. The app's process is counted (:func:`census`, from
``/proc``: resident memory, open files, sockets, threads, files in its temporary directory) after the
first ten calls, halfway through the calls 4 at a time, and after all of them; the soak holds when memory
and open files stay within :data:`TOLERANCE` of the first count, the sockets and temporary files are no
more than then, and the threads no more than halfway. Threads are held to the halfway count: the event
loop's worker pool (``min(32, cores + 4)`` threads) keeps the idle threads that calls at once made it start,
and reaches its size only after many such calls; a leak grows with every call, so the second half of the
calls at once would add to it.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.machine import describe_machine, load_average

__all__ = ["TOLERANCE", "Census", "census", "compare", "format_soak", "soak", "typed_call"]

Progress = Callable[[str], None]

#: How far resident memory and open files may move from the first ten calls' count.
TOLERANCE: Final = 0.05
#: The calls counted first (the baseline).
FIRST_CALLS: Final = 10
_GUARD_S: Final = 180.0
_ANSWER: Final = "Okay, noted."
_SYSTEM: Final = "strands-voice-ws"


@dataclass(frozen=True, slots=True)
class Census:
    """What a process holds now.

    Attributes:
        rss_mb: Resident memory.
        open_files: Open file descriptors (sockets included).
        sockets: Open sockets.
        threads: Threads.
        temp_files: Files under its temporary directory (None: not watched).
    """

    rss_mb: float
    open_files: int
    sockets: int
    threads: int
    temp_files: int | None = None


def census(pid: int, temp_dir: Path | None = None) -> Census:
    """Count what process ``pid`` holds (Linux ``/proc``)."""
    proc = Path(f"/proc/{pid}")
    rss_kb = next(
        int(line.split()[1])
        for line in (proc / "status").read_text().splitlines()
        if line.startswith("VmRSS:")
    )
    links = []
    for fd in (proc / "fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except OSError:
            continue  # closed while counted
    temp = None if temp_dir is None else sum(1 for _ in temp_dir.rglob("*"))
    return Census(
        rss_mb=round(rss_kb / 1024, 1),
        open_files=len(links),
        sockets=sum(1 for link in links if link.startswith("socket:")),
        threads=len(list((proc / "task").iterdir())),
        temp_files=temp,
    )


def compare(
    first: Census, last: Census, tolerance: float = TOLERANCE, threads_from: Census | None = None
) -> list[str]:
    """What leaked between two counts (empty: nothing): memory or open files more than ``tolerance`` over
    the first count, or more sockets or temporary files than then, or more threads than ``threads_from``
    (default: the first count)."""
    leaks = []
    if threads_from is not None and last.threads > threads_from.threads:
        leaks.append(f"threads: {threads_from.threads} -> {last.threads}")
    for name in ("rss_mb", "open_files"):
        before, after = getattr(first, name), getattr(last, name)
        if after > before * (1 + tolerance):
            leaks.append(f"{name}: {before} -> {after} (more than {tolerance:.0%})")
    counted = ("sockets", "temp_files") if threads_from is not None else ("sockets", "threads", "temp_files")
    for name in counted:
        before, after = getattr(first, name), getattr(last, name)
        if before is not None and after is not None and after > before:
            leaks.append(f"{name}: {before} -> {after}")
    return leaks


async def typed_call(url: str, prompts: tuple[str, ...] = ("first", "second")) -> int:
    """One call: ``start``, half a second of silence, each prompt answered in turn, hang up; the answers
    that ended (``agent_end``)."""
    from websockets.asyncio.client import connect

    async with asyncio.timeout(_GUARD_S), connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "start", "format": "pcm16", "sample_rate": 16000}))
        await _until(ws, "listening")
        for _ in range(25):
            await ws.send(bytes(640))  # 20 ms of silence
        ended = 0
        for prompt in prompts:
            await ws.send(json.dumps({"type": "prompt", "prompt": prompt}))
            await _until(ws, "agent_end")
            ended += 1
    return ended


async def _until(ws: Any, kind: str) -> None:
    """Read until an event of ``kind``.

    Raises:
        StrandsVoiceError: the app answered with an ``error`` event instead.
    """
    while True:
        frame = await ws.recv()
        if not isinstance(frame, str):
            continue
        event = json.loads(frame)
        if event.get("type") == kind:
            return
        if event.get("type") == "error":
            raise StrandsVoiceError(f"the call got an error waiting for {kind}: {event}")


async def _calls(url: str, count: int, at_once: int) -> None:
    slots = asyncio.Semaphore(at_once)

    async def one() -> None:
        async with slots:
            await typed_call(url)

    await asyncio.gather(*(one() for _ in range(count)))


async def soak(calls: int, progress: Progress, at_once: int = 4, settle_s: float = 2.0) -> dict[str, Any]:
    """``calls`` calls one after another, then ``calls`` 4 at a time, against the app in its own process
    (see the module docstring).

    Returns:
        A JSON-ready mapping: ``first`` and ``last`` counts, ``leaks`` (empty when the soak held), the
        calls, durations, machine and load average.
    """
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.bench.talk_calls import _start
    from strands_voice_tools.openai_stand_in import openai_stand_in_app

    model = ScriptedModel(text=_ANSWER, first_sentence_s=0.05, total_s=0.1)
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="soak-") as temp,
        running_server(openai_stand_in_app(model)) as llm,
    ):
        temp_dir = Path(temp)
        # Inherited by the app's process (talk_calls.CallPeer): its own temporary directory, and a call cap
        # that takes the calls at once.
        # (twice the calls at once: a hung-up call is counted out a moment after its socket closes).
        os.environ.update(TMPDIR=temp, CALL_MAX_CALLS=str(2 * at_once))
        try:
            running = (await _start((_SYSTEM,), f"{llm.base_url}/v1", progress))[_SYSTEM]
        finally:
            os.environ.pop("TMPDIR", None)
            os.environ.pop("CALL_MAX_CALLS", None)
        try:
            load = [load_average()]
            first, halfway, last = await _counted_calls(
                str(running.peer.url), running.peer.pid, temp_dir, calls, at_once, settle_s, progress
            )
            load.append(load_average())
        finally:
            await running.memory.stop()
            await running.peer.stop()
    return {
        "schema": "strands-voice-bench-soak/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "calls": {"one_after_another": calls, "at_once": at_once, "at_a_time": calls, "turns": 2},
        "first": asdict(first),
        "halfway": asdict(halfway),
        "last": asdict(last),
        "leaks": compare(first, last, threads_from=halfway),
        "load_average": load,
        "machine": describe_machine(),
        "duration_s": round(time.perf_counter() - started, 1),
    }


async def _counted_calls(
    url: str, pid: int, temp_dir: Path, calls: int, at_once: int, settle_s: float, progress: Progress
) -> tuple[Census, Census, Census]:
    """The soak's calls, and the app's counts after the first ten, halfway through those at once, and
    after all."""
    # The first ten: alone, then the last of them at once, so what calls at once use for good (the
    # event loop's worker threads, a bounded pool that keeps its idle threads) is in the baseline.
    await _calls(url, FIRST_CALLS - at_once, 1)
    await _calls(url, at_once, at_once)
    await asyncio.sleep(settle_s)
    first = census(pid, temp_dir)
    progress(f"after {FIRST_CALLS} calls: {first}")
    await _calls(url, calls - FIRST_CALLS, 1)
    progress(f"{calls} calls one after another")
    await _calls(url, calls // 2, at_once)
    await asyncio.sleep(settle_s)
    halfway = census(pid, temp_dir)
    progress(f"{calls // 2} calls {at_once} at a time: {halfway}")
    await _calls(url, calls - calls // 2, at_once)
    progress(f"{calls} calls {at_once} at a time")
    await asyncio.sleep(settle_s)
    return first, halfway, census(pid, temp_dir)


def format_soak(results: dict[str, Any]) -> str:
    """The two counts side by side and the verdict."""
    first, halfway, last = results["first"], results["halfway"], results["last"]
    lines = [
        "count | after the first 10 calls | halfway through those at once | after all",
        "---|---:|---:|---:",
    ]
    lines += [f"{name} | {first[name]} | {halfway[name]} | {last[name]}" for name in first]
    leaks = results["leaks"]
    lines.append("\nnothing leaked" if not leaks else "\nleaked: " + "; ".join(leaks))
    return "\n".join(lines)
