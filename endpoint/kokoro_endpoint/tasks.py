"""Task bookkeeping: every asyncio task is tracked and cancelled with a timeout."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from strands_voice_protocol.aio.tasks import cancel_and_wait as library_cancel_and_wait

__all__ = ["cancel_and_wait"]

logger = logging.getLogger(__name__)


async def cancel_and_wait(tasks: Iterable[asyncio.Task[object]], grace_s: float) -> None:
    """Cancel the tasks and wait up to ``grace_s`` seconds for them to end; log what did not, or failed."""
    tasks = list(tasks)
    await library_cancel_and_wait(tasks, grace_s)
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            logger.error("task=<%s> | failed", task.get_name(), exc_info=task.exception())
