"""Non-blocking access to the model: segment steps on a small pool of threads, the most urgent first.

Every request's synthesis is an iterator whose ``next()`` does one step's work (one decoder window, or
one segment). A :class:`SegmentStream` submits one step at a time to the :class:`SynthesisScheduler`; a
stream submits its next step only after the previous one returned. The event loop never blocks: it awaits
the step's future.

Which queued step runs next is the scheduler's ``policy``:

- ``deadline`` (the default): each listener has a :class:`~kokoro_endpoint.scheduling.playback.Playback`, the
  time its audio runs out if it plays at real-time speed from its first byte. A new request's first
  step, when its listener has nothing left to hear, is due at once: such steps go first, in the order
  the requests arrived, even when the others are stalling. It does not wait for the step running now
  either: while every worker runs another listener's step, it runs on the scheduler's **opening lane**
  (one more thread) and the running steps are paused (:meth:`Interrupt.pause
  <kokoro_endpoint.scheduling.interrupt.Interrupt.pause>`: the model call stops and runs again, whole, after
  the newcomer's step). A window grows to 160 frames, about a second on a CPU; a newcomer now waits for
  about its own first step. Every other step goes by its listener's deadline, the one who runs out
  first next. Ties go to the older stream (a session's request N before its request N+1), then to the
  step submitted first.
- ``fifo``: first submitted, first run (sessions take turns step by step).

A stream closed while its step runs (a cancel) sets its
:class:`~kokoro_endpoint.scheduling.interrupt.Interrupt`.

The choice is made when a worker becomes free, with the clock of that moment (deterministic for a given
clock); what the steps produce never depends on it. Who is admitted:
:mod:`kokoro_endpoint.scheduling.admission`.
"""

from __future__ import annotations

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

from kokoro_endpoint.scheduling.admission import DEFAULT_HOLD_S, AdmissionRule, Engaged
from kokoro_endpoint.scheduling.interrupt import Interrupt
from kokoro_endpoint.scheduling.playback import Clock, Playback
from kokoro_endpoint.scheduling.segment_stream import END, SegmentStream

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


def _step[T](iterator: Iterator[T]) -> T | object:
    return next(iterator, END)


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

    __slots__ = ("future", "opening", "seq", "stream")

    def __init__(self, stream: SegmentStream[Any], seq: int) -> None:
        self.stream = stream
        self.seq = seq
        self.opening = False  # a new request's first step (set when it starts running)
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()


class SynthesisScheduler:
    """Runs synthesis steps on ``workers`` threads, the most urgent first (see the module docstring).

    Args:
        workers: Model calls at once; 1 for one GPU or a CPU whose cores onnxruntime already uses.
        policy: ``deadline`` or ``fifo``.
        clock: Monotonic seconds (a fake one in tests).
        opening_lane: Under ``deadline``, run a new request's first step at once, pausing the running
            steps (an engine that cannot stop mid-call runs both at the same time).
        admission: Max load share for :class:`~kokoro_endpoint.scheduling.admission.AdmissionRule` (None:
        off). hold_s: How long a listener whose audio ran out still counts as engaged.

    Raises:
        ConfigurationError: unknown policy or no worker.
    """

    def __init__(
        self,
        workers: int = 1,
        policy: str = "deadline",
        clock: Clock = time.monotonic,
        opening_lane: bool = True,
        admission: float | None = None,
        hold_s: float = DEFAULT_HOLD_S,
    ) -> None:
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
        self._listeners: set[Playback] = set()  # listeners with an open stream (their own ``streams``)
        self._playing: set[Playback] = set()  # listeners with no open stream whose audio may still play
        self.rule = AdmissionRule(admission, workers)
        self._hold_s = hold_s
        self._active: set[_Job] = set()  # the workers' running steps
        self._lane_busy = False  # the opening lane runs a step: the workers start none
        self._stopped = False
        self._threads = [
            threading.Thread(target=self._work, name=f"synth-{index}", daemon=True)
            for index in range(workers)
        ]
        lane = opening_lane and policy == "deadline"
        self._lane = (
            threading.Thread(target=self._lane_work, name="synth-opening", daemon=True) if lane else None
        )
        self._all_threads = [*self._threads, *([self._lane] if self._lane else [])]
        for thread in self._all_threads:
            thread.start()

    def playback(self, session: bool = False) -> Playback:
        """A new listener's playback clock, on this scheduler's clock (``session``: see ``Playback``)."""
        return Playback(self.clock, session)

    def forget(self, playback: Playback) -> None:
        """The listener left (its session ended): it is no longer engaged."""
        with self._condition:
            self._playing.discard(playback)

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
            playback.streams.add(order)
            self._listeners.add(playback)
            self._playing.discard(playback)
        return SegmentStream(self, iterator, playback, seconds, order, self.clock(), interrupt)

    def counters(self) -> SchedulerCounters:
        """A snapshot of the counters."""
        with self._condition:
            return SchedulerCounters(
                self.policy,
                len(self._queued),
                self._running,
                self._steps,
                self._late,
                len(self._listeners),
                round(self._load, 4),
            )

    def calibrate(self, load: float) -> None:
        """Seed the measured load (compute seconds per audio second) with a start-up measurement, so
        admission knows the engine's rate before the first listener (real steps update it)."""
        if load > 0:
            with self._condition:
                self._load = load

    def engaged(self) -> list[Playback]:
        """The engaged listeners: being synthesized for, or still playing (plus the hold) since."""
        now = self.clock()
        with self._condition:
            self._playing = {
                playback
                for playback in self._playing
                if playback.runs_out_at is not None and playback.runs_out_at + self._hold_s > now
            }
            return [*self._listeners, *self._playing]

    def refusal(self, listener: Playback | None = None) -> str | None:
        """Why a new listener cannot be admitted now (:mod:`kokoro_endpoint.scheduling.admission`), or None.

        Args:
            listener: The asking listener's playback clock; one already engaged is no newcomer (the next
                sentence of its answer) and is never refused.
        """
        engaged = self.engaged()
        if listener is not None and listener in engaged:
            return None
        with self._condition:
            load = self._load
            views = [
                Engaged(bool(playback.streams), playback.buffered_s())
                for playback in engaged
                if playback is not listener
            ]
        return self.rule.reason(load, views)

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
        for thread in self._all_threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    # the StepRunner port, called by SegmentStream --------------------------------------------------

    def submit(self, stream: SegmentStream[Any]) -> concurrent.futures.Future[Any]:
        """Queue ``stream``'s next step (cancelled at once after :meth:`shutdown`)."""
        with self._condition:
            job = _Job(stream, next(self._seq))
            if self._stopped:
                job.future.cancel()
                return job.future
            self._queued.append(job)
            self._condition.notify_all()  # a worker or the opening lane, whichever may take it
        return job.future

    def release(self, stream: SegmentStream[Any]) -> None:
        """``stream`` closed: its listener counts while it has another open stream."""
        with self._condition:
            playback = stream.playback
            playback.streams.discard(stream.order)
            if not playback.streams:
                self._listeners.discard(playback)
                if playback.session and stream.finished and playback.runs_out_at is not None:
                    self._playing.add(playback)  # its answer may go on (a cancelled one does not)

    # worker ------------------------------------------------------------------------------------------

    def _key(self, job: _Job) -> tuple[int, float, int, int]:
        if self.policy == "fifo":
            return (0, 0.0, 0, job.seq)
        stream = job.stream
        if stream.opens():
            return (0, stream.since, stream.order, job.seq)
        return (1, stream.deadline(), stream.order, job.seq)

    def _take(self, job: _Job) -> tuple[_Job, float] | None:
        """Start ``job`` (under the lock): it and when its listener runs out of audio (``inf``: it has
        none playing); None when it was cancelled meanwhile."""
        self._queued.remove(job)
        if not job.future.set_running_or_notify_cancel():
            return None
        self._running += 1
        job.opening = job.stream.opens()
        runs_out_at = job.stream.playback.runs_out_at
        return job, math.inf if runs_out_at is None else runs_out_at

    def _next_job(self) -> tuple[_Job, float] | None:
        """The most urgent queued step (see :meth:`_take`), blocking until one is queued and the opening
        lane is idle; None once stopped."""
        with self._condition:
            while True:
                if self._stopped:
                    return None
                self._queued = [job for job in self._queued if not job.future.cancelled()]
                if self._queued and not self._lane_busy:
                    picked = self._take(min(self._queued, key=self._key))
                    if picked is not None:
                        self._active.add(picked[0])
                        return picked
                    continue
                self._condition.wait()

    def _next_opening(self) -> tuple[_Job, float, list[Interrupt]] | None:
        """A new request's first step for the opening lane, once every worker runs another listener's
        step (not another newcomer's), with the interrupts to pause; None once stopped."""
        with self._condition:
            while True:
                if self._stopped:
                    return None
                running = list(self._active)
                if len(running) >= len(self._threads) and not any(job.opening for job in running):
                    opening = [
                        job for job in self._queued if not job.future.cancelled() and job.stream.opens()
                    ]
                    picked = self._take(min(opening, key=self._key)) if opening else None
                    if picked is not None:
                        self._lane_busy = True
                        paused = [job.stream.interrupt for job in running if job.stream.interrupt is not None]
                        return (*picked, paused)
                    if opening:
                        continue
                self._condition.wait()

    def _work(self) -> None:
        while (picked := self._next_job()) is not None:
            self._run(*picked)

    def _lane_work(self) -> None:
        while (picked := self._next_opening()) is not None:
            job, runs_out_at, paused = picked
            logger.debug("order=<%d> | first step runs now, %d running paused", job.stream.order, len(paused))
            for interrupt in paused:
                interrupt.pause()
            try:
                self._run(job, runs_out_at)
            finally:
                for interrupt in paused:
                    interrupt.resume()
                with self._condition:
                    self._lane_busy = False
                    self._condition.notify_all()

    def _run(self, job: _Job, runs_out_at: float) -> None:
        interrupt = job.stream.interrupt
        paused_before = interrupt.paused_s if interrupt is not None else 0.0
        started, began = self.clock(), time.perf_counter()
        try:
            result = _step(job.stream.iterator)
        except BaseException as error:
            self._account(job, started > runs_out_at, 0.0, 0.0)
            job.future.set_exception(error)
            return
        audio_s = 0.0
        if result is not END and job.stream.seconds is not None:
            audio_s = job.stream.seconds(result)
        # The time it spent paused for a newcomer is not its own.
        paused_s = interrupt.paused_s - paused_before if interrupt is not None else 0.0
        # Accounted before the result is handed over, so the stream's next step sees the new playback.
        self._account(job, started > runs_out_at, time.perf_counter() - began - paused_s, audio_s)
        job.future.set_result(result)

    def _account(self, job: _Job, late: bool, compute_s: float, audio_s: float) -> None:
        stream = job.stream
        with self._condition:
            self._active.discard(job)
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
