"""The soak's short form: calls one after another and 4 at a time, each two typed turns and a hang-up,
leave the app holding no more threads, tasks or open files than after the first calls.

In process, so the server's asyncio tasks can be counted (the full soak, ``strands-voice bench --soak 100``,
counts the app's own process from outside: docs/reliability.md). The TTS is in memory and the listening
scripted: what is checked is what a call leaves behind, not how it sounds. After the calls the counts are
polled (bounded) until they are back: a leak never comes back, so the test cannot pass by luck.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.call import scripted_listeners
from support.conversation_model import HoldingEcho
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.timeout(240)

SETTLE_S = 30.0


@pytest.fixture
def app_server(tmp_path: Path) -> Iterator[Any]:
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(
        tts_url="ws://127.0.0.1:9",
        model=HoldingEcho(),
        conversation_store=ConversationStore(kind="none"),
        transport_factory=InstantTTS,
        listener_factory=scripted_listeners(["unused"]),
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield server


def _threads() -> int:
    """Threads, less the event loops' default executors' (``asyncio_N``: a pool bounded by its
    ``max_workers``, whose idle threads stay)."""
    return sum(1 for thread in threading.enumerate() if not thread.name.startswith("asyncio_"))


def _counts(server: Any) -> tuple[int, int, int]:
    """Threads (:func:`_threads`), the server loop's tasks and this process's open files."""
    loop = server._server.servers[0].get_loop()

    async def tasks() -> int:
        return len(asyncio.all_tasks())

    task_count = asyncio.run_coroutine_threadsafe(tasks(), loop).result(10)
    return _threads(), task_count, len(os.listdir("/proc/self/fd"))


def _settled(server: Any, baseline: tuple[int, int, int]) -> tuple[int, int, int]:
    """The counts once every one is back at (or under) ``baseline``, or the last counts after SETTLE_S."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        counts = _counts(server)
        if all(now <= then for now, then in zip(counts, baseline, strict=True)):
            return counts
        if time.monotonic() > deadline:
            return counts
        time.sleep(0.1)


def test_calls_one_after_another_and_four_at_a_time_leak_nothing(app_server: Any) -> None:
    from strands_voice_tools.bench.soak import typed_call

    url = app_server.base_url.replace("http://", "ws://") + "/ws"

    async def calls(count: int, at_once: int) -> list[int]:
        slots = asyncio.Semaphore(at_once)

        async def one() -> int:
            async with slots:
                return await typed_call(url)

        return list(await asyncio.gather(*(one() for _ in range(count))))

    # The first calls, alone and 4 at a time: lazy imports, caches, what 4 calls use at once.
    assert asyncio.run(calls(3, 1)) == [2] * 3
    assert asyncio.run(calls(4, 4)) == [2] * 4
    time.sleep(0.5)
    baseline = _counts(app_server)
    assert asyncio.run(calls(12, 1)) == [2] * 12
    assert asyncio.run(calls(12, 4)) == [2] * 12
    after = _settled(app_server, baseline)
    assert all(now <= then for now, then in zip(after, baseline, strict=True)), (baseline, after)
