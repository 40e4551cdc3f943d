"""One request's synthesis steps as the event loop sees them (:class:`SegmentStream`).

A stream submits one step at a time to its :class:`StepRunner` (the scheduler) and awaits the step's future,
so the event loop never blocks; closing it drops a queued step or interrupts a running one. The stream
knows its runner only through that two-method port, so this module does not import the scheduler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

from kokoro_endpoint.scheduling.interrupt import Interrupt, SynthesisInterrupted, close_iterator
from kokoro_endpoint.scheduling.playback import Playback

__all__ = ["END", "SegmentStream", "StepRunner"]

#: What a step returns when the request's iterator is exhausted.
END: Final = object()


class StepRunner(Protocol):
    """What a :class:`SegmentStream` needs of the scheduler that runs its steps."""

    def submit(self, stream: SegmentStream[Any]) -> concurrent.futures.Future[Any]:
        """Queue the stream's next step; the future resolves to its result (or :data:`END`)."""
        ...

    def release(self, stream: SegmentStream[Any]) -> None:
        """The stream closed: it no longer counts among its listener's open streams."""
        ...


class SegmentStream[T]:
    """One request's steps, run one at a time on the scheduler's threads.

    Not safe for concurrent :meth:`next` calls: one consumer task owns it.

    Attributes:
        iterator: The request's steps.
        playback: The listener's playback clock.
        seconds: The audio seconds of a step's result (None: unknown).
        interrupt: Set by :meth:`close` while a step runs (None: the step runs to its end).
        since: When the request arrived, on the runner's clock (its first step is due then).
        order: The stream's creation order (older streams win ties).
        started: Whether a step of it has run.
        finished: Whether it ended with its last step (not closed early).
    """

    def __init__(
        self,
        runner: StepRunner,
        iterator: Iterator[T],
        playback: Playback,
        seconds: Callable[[T], float] | None,
        order: int,
        since: float,
        interrupt: Interrupt | None = None,
    ) -> None:
        self._runner, self.iterator, self.interrupt = runner, iterator, interrupt
        self.playback, self.seconds = playback, seconds
        self.since, self.order = since, order
        self.started = False  # a step of it has run
        self.finished = False  # its last step ran (not closed early by a cancel)
        self._running: concurrent.futures.Future[Any] | None = None
        self._closed = False

    def _oldest(self) -> bool:
        return self.order == min(self.playback.streams, default=self.order)

    def opens(self) -> bool:
        """Whether the next step is a request's first for a listener with nothing left to hear.

        Only the listener's oldest open request opens: a request synthesized ahead of another is heard
        after it.
        """
        runs_out_at = self.playback.runs_out_at
        fresh = runs_out_at is None or runs_out_at <= self.since
        return fresh and not self.started and self._oldest()

    def deadline(self) -> float:
        """When this stream's listener needs its next audio.

        A request synthesized ahead of an older one of the same listener, before the listener got any
        audio, is needed only after that audio: it waits (``inf``) until the older one produced some.
        """
        if self.playback.runs_out_at is None and not self._oldest():
            return math.inf
        return self.playback.deadline(self.since)

    async def next(self) -> T | None:
        """The next step's result, or None when the iterator is exhausted or the stream closed (also when
        :meth:`close` is called, from another task, while this waits).

        Raises:
            Exception: whatever the engine raised for this step.
        """
        if self._closed:
            return None
        future = self._runner.submit(self)
        self._running = future
        try:
            result = await asyncio.wrap_future(future)
        except (asyncio.CancelledError, SynthesisInterrupted):
            # Closed meanwhile (a cancel from another task): its queued step was dropped, or its running
            # step interrupted. A cancellation of this task itself goes on.
            task = asyncio.current_task()
            if self._closed and not (task is not None and task.cancelling()):
                return None
            raise
        finally:
            self._running = None if future.done() else future
        if result is END:
            self.finished = True
            self.close()
            return None
        return result  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop: a queued step is dropped; a running one is interrupted (or, when the engine cannot stop
        mid-call, finishes its step), then the iterator closes."""
        if self._closed:
            return
        self._closed = True
        self._runner.release(self)
        running = self._running
        self._running = None
        if running is not None and not running.cancel() and not running.done():
            # The generator is executing on a worker thread; close it there once this step returns.
            running.add_done_callback(lambda _: close_iterator(self.iterator))
            if self.interrupt is not None:
                self.interrupt.set()
        else:
            close_iterator(self.iterator)
