"""Task bookkeeping: a task we started is cancelled and awaited, with a bound, never left behind."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait"]

logger = logging.getLogger(__name__)


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]], grace_s: float) -> set[asyncio.Task[Any]]:
    """Cancel the unfinished tasks and wait up to ``grace_s`` seconds for them to end.

    Args:
        tasks: The tasks; finished ones are left as they are.
        grace_s: The longest to wait, so a task that ignores cancellation cannot hang the caller.

    Returns:
        The tasks still running after the wait (each logged as a warning).
    """
    pending = [task for task in tasks if not task.done()]
    for task in pending:
        task.cancel()
    if not pending:
        return set()
    _done, still = await asyncio.wait(pending, timeout=grace_s)
    for task in still:
        logger.warning("task=<%s> | did not stop within %.1f s", task.get_name(), grace_s)
    return still
