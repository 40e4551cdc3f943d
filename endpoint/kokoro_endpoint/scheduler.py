"""Non-blocking access to the model: segment steps on a small pool of threads, the most urgent first.

Every request's synthesis is an iterator whose ``next()`` does one step's work (one decoder window, or
one segment). A :class:`SegmentStream` submits one step at a time to the :class:`SynthesisScheduler`; a
stream submits its next step only after the previous one returned. The event loop never blocks: it awaits
the step's future.

Which queued step runs next is the scheduler's ``policy``:

- ``deadline`` (the default): each listener has a :class:`~kokoro_endpoint.playback.Playback`, the
  time its audio runs out if it plays at real-time speed from its first byte. A new request's first
  step, when its listener has nothing left to hear, is due at once: such steps go first, in the order
  the requests arrived (so a newcomer waits for at most the step running now, even when the others are
  stalling). Every other step goes by its listener's deadline, the one who runs out first next. Ties go
  to the older stream (a session's request N before its request N+1), then to the step submitted first.
- ``fifo``: first submitted, first run (sessions take turns step by step).

A stream closed while its step runs (a cancel) sets its :class:`~kokoro_endpoint.interrupt.Interrupt`.

The choice is made when a worker becomes free, with the clock of that moment, so it is deterministic for
a given clock. What the steps produce never depends on it: the engine's windows are a pure function of
the request, only their order changes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from strands_voice_protocol.errors import ConfigurationError

from kokoro_endpoint.interrupt import Interrupt, SynthesisInterrupted, close_iterator
from kokoro_endpoint.playback import Clock, Playback

__all__ = [
    "SCHEDULING_POLICIES",
    "SchedulerCounters",
    "SegmentStream",
    "SynthesisScheduler",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: The step-ordering policies (``Settings.scheduling``).
SCHEDULING_POLICIES: Final = ("deadline", "fifo")

#: Weight of the newest step in the measured compute time per second of audio (a moving average).
_LOAD_SMOOTHING: Final = 0.2

_END = object()


def _step[T](iterator: Iterator[T]) -> T | object:
    return next(iterator, _END)


@dataclass(frozen=True, slots=True)
class SchedulerCounters:
    """What the scheduler has done so far (for logs and metrics).

    Attributes:
        policy: ``deadline`` or ``fifo``.
        queued_steps: Steps waiting for a worker now.
        running_steps: Steps on a worker now.
        steps: Steps run so far.
        late_steps: Steps started after their listener had run out of audio (a stall).
        listeners: Listeners with a request being synthesized now.
        load: Compute seconds per second of audio produced (moving average; 0 before any audio).
    """

    policy: str
    queued_steps: int
    running_steps: int
    steps: int
    late_steps: int
    listeners: int
    load: float


class _Job:
    """One queued step: its stream's ordering data and the future its result goes to."""

    __slots__ = ("future", "seq", "stream")

    def __init__(self, stream: SegmentStream[Any], seq: int) -> None:
        self.stream = stream
        self.seq = seq
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()


class SynthesisScheduler:
    """Runs synthesis steps on ``workers`` threads, the most urgent first (see the module docstring).

    Args:
        workers: Model calls at once; 1 for one GPU or a CPU whose cores onnxruntime already uses.
        policy: ``deadline`` or ``fifo``.
        clock: Monotonic seconds (a fake one in tests).

    Raises:
        ConfigurationError: unknown policy or no worker.
    """

    def __init__(self, workers: int = 1, policy: str = "deadline", clock: Clock = time.monotonic) -> None:
        if policy not in SCHEDULING_POLICIES:
            raise ConfigurationError(f"scheduling must be one of {', '.join(SCHEDULING_POLICIES)}")
        if workers < 1:
            raise ConfigurationError("synthesis_workers must be positive")
        self.policy = policy
        self.clock = clock
        self._condition = threading.Condition()
        self._queued: list[_Job] = []
        self._seq = itertools.count()
        self._stream_seq = itertools.count()
        self._running = 0
        self._steps = 0
        self._late = 0
        self._load = 0.0
        self._open: dict[int, int] = {}  # id(playback) -> open streams
        self._stopped = False
        self._threads = [
            threading.Thread(target=self._work, name=f"synth-{index}", daemon=True)
            for index in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def playback(self) -> Playback:
        """A new listener's playback clock, on this scheduler's clock."""
        return Playback(self.clock)

    def stream(
        self,
        iterator: Iterator[T],
        playback: Playback | None = None,
        seconds: Callable[[T], float] | None = None,
        interrupt: Interrupt | None = None,
    ) -> SegmentStream[T]:
        """Wrap a request's step iterator so its steps run here.

        Args:
            iterator: The request's steps.
            playback: The listener's playback clock (shared by a session's requests); a new one if None.
            seconds: The audio seconds of a step's result; without it the playback learns nothing and
                every step is due when the request arrived.
            interrupt: What the iterator's model calls watch; set when the stream is closed mid-step.
        """
        with self._condition:
            order = next(self._stream_seq)
            playback = playback or self.playback()
            self._open[id(playback)] = self._open.get(id(playback), 0) + 1
            playback.streams.add(order)
        return SegmentStream(self, iterator, playback, seconds, order, interrupt)

    def counters(self) -> SchedulerCounters:
        """A snapshot of the counters."""
        with self._condition:
            return SchedulerCounters(
                self.policy,
                len(self._queued),
                self._running,
                self._steps,
                self._late,
                len(self._open),
                round(self._load, 4),
            )

    def admits(self, max_load: float | None) -> bool:
        """Whether one more listener can be kept fed (admission control; always True when off).

        The rule: with ``L`` the measured compute seconds per second of audio and ``n`` the listeners
        being synthesized for now, a new one is admitted while ``(n + 1) * L <= max_load * workers``.
        Before any audio was measured, or while no one is being synthesized for, everyone is admitted
        (refusing then would help no one).

        Args:
            max_load: The share of the workers' time the listeners may need (e.g. 0.9); None is off.
        """
        if max_load is None:
            return True
        with self._condition:
            listeners, load = len(self._open), self._load
        return listeners == 0 or (listeners + 1) * load <= max_load * len(self._threads)

    def shutdown(self, timeout: float = 30.0) -> None:
        """Drop queued steps and wait up to ``timeout`` seconds for a running step to finish.

        Waiting matters at interpreter exit: a daemon worker still inside onnxruntime when Python
        finalizes is killed as it returns, which aborts the whole process ("terminate called without an
        active exception").
        """
        with self._condition:
            self._stopped = True
            queued, self._queued = self._queued, []
            self._condition.notify_all()
        for job in queued:
            job.future.cancel()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    # called by SegmentStream -------------------------------------------------------------------------

    def _submit(self, stream: SegmentStream[Any]) -> concurrent.futures.Future[Any]:
        with self._condition:
            job = _Job(stream, next(self._seq))
            if self._stopped:
                job.future.cancel()
                return job.future
            self._queued.append(job)
            self._condition.notify()
        return job.future

    def _closed(self, playback: Playback, order: int) -> None:
        with self._condition:
            playback.streams.discard(order)
            left = self._open.get(id(playback), 0) - 1
            if left > 0:
                self._open[id(playback)] = left
            else:
                self._open.pop(id(playback), None)

    # worker ------------------------------------------------------------------------------------------

    def _key(self, job: _Job) -> tuple[int, float, int, int]:
        if self.policy == "fifo":
            return (0, 0.0, 0, job.seq)
        stream = job.stream
        if stream.opens():
            return (0, stream.since, stream.order, job.seq)
        return (1, stream.deadline(), stream.order, job.seq)

    def _next_job(self) -> tuple[_Job, float] | None:
        """The most urgent queued step and when its listener runs out of audio (``inf``: it has none
        playing), blocking until one is queued; None once stopped."""
        with self._condition:
            while True:
                if self._stopped:
                    return None
                live = [job for job in self._queued if not job.future.cancelled()]
                self._queued = live
                if live:
                    job = min(live, key=self._key)
                    self._queued.remove(job)
                    if job.future.set_running_or_notify_cancel():
                        self._running += 1
                        runs_out_at = job.stream.playback.runs_out_at
                        return job, math.inf if runs_out_at is None else runs_out_at
                    continue
                self._condition.wait()

    def _work(self) -> None:
        while (picked := self._next_job()) is not None:
            job, runs_out_at = picked
            started, began = self.clock(), time.perf_counter()
            try:
                result = _step(job.stream.iterator)
            except BaseException as error:
                self._account(job.stream, started > runs_out_at, 0.0, 0.0)
                job.future.set_exception(error)
                continue
            audio_s = 0.0
            if result is not _END and job.stream.seconds is not None:
                audio_s = job.stream.seconds(result)
            # Accounted before the result is handed over, so the stream's next step sees the new playback.
            self._account(job.stream, started > runs_out_at, time.perf_counter() - began, audio_s)
            job.future.set_result(result)

    def _account(self, stream: SegmentStream[Any], late: bool, compute_s: float, audio_s: float) -> None:
        with self._condition:
            self._running -= 1
            self._steps += 1
            self._late += int(late)
            stream.started = True
            if audio_s > 0:
                stream.playback.add(audio_s)
                sample = compute_s / audio_s
                self._load = (
                    sample if self._load == 0 else self._load + _LOAD_SMOOTHING * (sample - self._load)
                )
        if late:
            logger.debug("order=<%d> | step started after its listener ran out of audio", stream.order)


class SegmentStream[T]:
    """One request's steps, run one at a time on the scheduler's threads.

    Not safe for concurrent :meth:`next` calls: one consumer task owns it.

    Attributes:
        iterator: The request's steps.
        playback: The listener's playback clock.
        seconds: The audio seconds of a step's result (None: unknown).
        interrupt: Set by :meth:`close` while a step runs (None: the step runs to its end).
        since: When the request arrived (its first step is due then).
        order: The stream's creation order (older streams win ties).
        started: Whether a step of it has run.
    """

    def __init__(
        self,
        scheduler: SynthesisScheduler,
        iterator: Iterator[T],
        playback: Playback,
        seconds: Callable[[T], float] | None,
        order: int,
        interrupt: Interrupt | None = None,
    ) -> None:
        self._scheduler = scheduler
        self.iterator = iterator
        self.interrupt = interrupt
        self.playback = playback
        self.seconds = seconds
        self.since = scheduler.clock()  # the request arrives now
        self.order = order
        self.started = False  # a step of it has run
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
        future = self._scheduler._submit(self)
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
        if result is _END:
            self.close()
            return None
        return result  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop: a queued step is dropped; a running one is interrupted (or, when the engine cannot stop
        mid-call, finishes its step), then the iterator closes."""
        if self._closed:
            return
        self._closed = True
        self._scheduler._closed(self.playback, self.order)
        running = self._running
        self._running = None
        if running is not None and not running.cancel() and not running.done():
            # The generator is executing on a worker thread; close it there once this step returns.
            running.add_done_callback(lambda _: close_iterator(self.iterator))
            if self.interrupt is not None:
                self.interrupt.set()
        else:
            close_iterator(self.iterator)
