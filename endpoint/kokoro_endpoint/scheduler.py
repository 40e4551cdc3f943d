"""Fair, non-blocking access to the model: segment steps on a small dedicated thread pool.

Every request's synthesis is an iterator whose ``next()`` does one segment's work. A
:class:`SegmentStream` submits one step at a time to the :class:`SynthesisScheduler`'s pool, whose queue is
first in, first out; a session submits its next step only after the previous one returned, so sessions
take turns segment by segment and none waits behind another's long text for more than one segment. The
event loop never blocks: it awaits the step's future.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Iterator
from typing import TypeVar

__all__ = ["SegmentStream", "SynthesisScheduler", "close_iterator"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_END = object()


def _step[T](iterator: Iterator[T]) -> T | object:
    return next(iterator, _END)


def close_iterator[T](iterator: Iterator[T]) -> None:
    """Close a synthesis iterator when it can be closed (a generator); a failure to close is logged."""
    close = getattr(iterator, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            logger.exception("could not close a synthesis iterator")


class SynthesisScheduler:
    """Runs synthesis steps on ``workers`` threads, in the order they were submitted.

    Args:
        workers: Model calls at once; 1 for one GPU or a CPU whose cores onnxruntime already uses.
    """

    def __init__(self, workers: int = 1) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="synth"
        )

    def stream(self, iterator: Iterator[T]) -> SegmentStream[T]:
        """Wrap a segment iterator so its steps run here."""
        return SegmentStream(self._executor, iterator)

    @property
    def queued_steps(self) -> int:
        """Steps submitted and not yet started (waiting for a worker)."""
        return self._executor._work_queue.qsize()

    def shutdown(self) -> None:
        """Drop queued steps; a running step finishes on its thread."""
        self._executor.shutdown(wait=False, cancel_futures=True)


class SegmentStream[T]:
    """One request's segments, produced one step at a time on the scheduler's threads.

    Not safe for concurrent :meth:`next` calls: one consumer task owns it.
    """

    def __init__(self, executor: concurrent.futures.Executor, iterator: Iterator[T]) -> None:
        self._executor = executor
        self._iterator = iterator
        self._running: concurrent.futures.Future[T | object] | None = None
        self._closed = False

    async def next(self) -> T | None:
        """The next segment, or None when the iterator is exhausted or the stream closed.

        Raises:
            Exception: whatever the engine raised for this step.
        """
        if self._closed:
            return None
        future = self._executor.submit(_step, self._iterator)
        self._running = future
        try:
            result = await asyncio.wrap_future(future)
        finally:
            self._running = None if future.done() else future
        if result is _END:
            self.close()
            return None
        return result  # type: ignore[return-value]

    def close(self) -> None:
        """Stop: a queued step is dropped; a running one finishes its segment, then the iterator closes."""
        if self._closed:
            return
        self._closed = True
        running = self._running
        self._running = None
        if running is not None and not running.cancel() and not running.done():
            # The generator is executing on a worker thread; close it there once this step returns.
            running.add_done_callback(lambda _: close_iterator(self._iterator))
        else:
            close_iterator(self._iterator)
