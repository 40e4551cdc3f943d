"""``strands_voice_protocol.aio.tasks.cancel_and_wait``: the one way a task we started is stopped."""

from __future__ import annotations

import asyncio
import logging

import pytest
from strands_voice_protocol.aio.tasks import cancel_and_wait

HANG_GUARD_S = 30.0


async def _sleeper() -> None:
    await asyncio.sleep(3600)


async def _stubborn(release: asyncio.Event) -> None:
    # Ignores the first cancellation until released: a task that outlives the grace period.
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        await release.wait()


async def _failing() -> None:
    raise RuntimeError("boom")


def test_cancels_unfinished_tasks_and_returns_none_left() -> None:
    async def scenario() -> None:
        tasks = [asyncio.create_task(_sleeper()) for _ in range(3)]
        await asyncio.sleep(0)
        still = await cancel_and_wait(tasks, HANG_GUARD_S)
        assert still == set()
        assert all(task.cancelled() for task in tasks)

    asyncio.run(scenario())


def test_a_task_that_ignores_cancellation_is_returned_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        release = asyncio.Event()
        stubborn = asyncio.create_task(_stubborn(release), name="stubborn")
        await asyncio.sleep(0)
        with caplog.at_level(logging.WARNING, logger="strands_voice_protocol.aio.tasks"):
            still = await cancel_and_wait([stubborn], 0.01)
        assert still == {stubborn}
        assert "task=<stubborn> | did not stop" in caplog.text
        release.set()
        await asyncio.wait_for(stubborn, HANG_GUARD_S)

    asyncio.run(scenario())


def test_failures_are_logged_only_when_asked(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario(log_failures: bool) -> None:
        failed = asyncio.create_task(_failing(), name="failing")
        await asyncio.wait([failed], timeout=HANG_GUARD_S)
        running = asyncio.create_task(_sleeper(), name="running")
        await asyncio.sleep(0)
        still = await cancel_and_wait([failed, running], HANG_GUARD_S, log_failures=log_failures)
        assert still == set() and running.cancelled()
        assert isinstance(failed.exception(), RuntimeError)

    with caplog.at_level(logging.ERROR, logger="strands_voice_protocol.aio.tasks"):
        asyncio.run(scenario(log_failures=False))
        assert "failed" not in caplog.text
        asyncio.run(scenario(log_failures=True))
    records = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in records] == ["task=<failing> | failed"]
    assert records[0].exc_info is not None and isinstance(records[0].exc_info[1], RuntimeError)


def test_no_sans_io_module_imports_the_asyncio_layer() -> None:
    import ast
    from pathlib import Path

    import strands_voice_protocol

    root = Path(strands_voice_protocol.__file__).parent
    for path in root.rglob("*.py"):
        if "aio" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name != "asyncio" and not name.startswith("strands_voice_protocol.aio"), (path, name)
