"""Task bookkeeping: a task we started is cancelled and awaited, with a bound, never left behind."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait"]

logger = logging.getLogger(__name__)


async def cancel_and_wait(
    tasks: Iterable[asyncio.Task[Any]], grace_s: float, *, log_failures: bool = False
) -> set[asyncio.Task[Any]]:
    """Cancel the unfinished tasks and wait up to ``grace_s`` seconds for them to end.

    Args:
        tasks: The tasks; finished ones are not cancelled (but see ``log_failures``).
        grace_s: The longest to wait, so a task that ignores cancellation cannot hang the caller.
        log_failures: Also log, as an error with its traceback, each task that ended by raising (finished
            before the call or during the wait). For callers that never await their tasks' results (a
            server's background tasks), so a failure is seen once and not left to asyncio's "exception
            was never retrieved" at garbage collection. Leave it off where the caller reads the results.

    Returns:
        The tasks still running after the wait (each logged as a warning).
    """
    tasks = list(tasks)
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    still: set[asyncio.Task[Any]] = set()
    if pending:
        _done, still = await asyncio.wait(pending, timeout=grace_s)
    for task in still:
        logger.warning("task=<%s> | did not stop within %.1f s", task.get_name(), grace_s)
    if log_failures:
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                logger.error("task=<%s> | failed", task.get_name(), exc_info=task.exception())
    return still
