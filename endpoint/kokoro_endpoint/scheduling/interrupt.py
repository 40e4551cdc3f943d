"""Stopping a request's synthesis: between its steps (:func:`close_iterator`) or in the middle of one.

One step of a request (a decoder window, a segment) can take hundreds of milliseconds on a CPU. When the
client cancels the request (a barge-in), the audio of that step will never be heard, and the listener's
next request would wait for it: its first window queues behind the step. The scheduler therefore sets the
request's :class:`Interrupt` when it closes a stream whose step is running; an engine that can stop a model
call mid-way (onnxruntime's ``RunOptions.terminate``) ends the step with :class:`SynthesisInterrupted`
within one graph node, and the worker is free for the next request at once.

A running step can also be **paused** (:meth:`Interrupt.pause`): the scheduler does it so that a new
request's first step runs at once instead of after another listener's long window. The model call stops
the same way, then waits for :meth:`Interrupt.resume` and runs again from the start: its inputs are the
same, so is its output (the int8 graph has no random operators), and the listener hears exactly the audio
it would have heard, a little later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from strands_voice_protocol.errors import StrandsVoiceError

__all__ = ["Interrupt", "SynthesisInterrupted", "close_iterator"]

logger = logging.getLogger(__name__)


def close_iterator[T](iterator: Iterator[T]) -> None:
    """Close a synthesis iterator when it can be closed (a generator); a failure to close is logged."""
    close = getattr(iterator, "close", None)
    if close is not None:
        try:
            close()
        except Exception:
            logger.exception("could not close a synthesis iterator")


class SynthesisInterrupted(StrandsVoiceError):
    """A request's step stopped mid-way because the request was cancelled (its audio is not wanted)."""


class Interrupt:
    """A request's stop signal: set once, from any thread; the engine's running model call watches it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._stops: list[Callable[[], None]] = []
        self._running = threading.Event()  # clear while paused
        self._running.set()
        self._paused_at: float | None = None
        #: How many times a pause stopped a watched call (the caller runs that call again).
        self.pauses = 0
        #: Seconds spent paused, in total.
        self.paused_s = 0.0

    @property
    def is_set(self) -> bool:
        """Whether the request's synthesis should stop."""
        return self._set

    def set(self) -> None:
        """Stop the call being watched now (if any) and every later one; idempotent."""
        with self._lock:
            if self._set:
                return
            self._set = True
            stops = list(self._stops)
        self._running.set()  # a paused call wakes up to find the request cancelled
        for stop in stops:
            stop()

    def pause(self) -> None:
        """Stop the call being watched now (it runs again after :meth:`resume`); later calls wait for
        :meth:`resume` before they start. Idempotent; no effect once set."""
        with self._lock:
            if self._set or self._paused_at is not None:
                return
            self._paused_at = time.perf_counter()
            self._running.clear()
            stops = list(self._stops)
            self.pauses += len(stops)
        for stop in stops:
            stop()

    def resume(self) -> None:
        """Let paused and waiting calls run; idempotent."""
        with self._lock:
            if self._paused_at is not None:
                self.paused_s += time.perf_counter() - self._paused_at
                self._paused_at = None
            self._running.set()

    def check(self) -> None:
        """Raise :class:`SynthesisInterrupted` when set (between model calls)."""
        if self._set:
            raise SynthesisInterrupted("the request was cancelled")

    @contextmanager
    def watching(self, stop: Callable[[], None]) -> Iterator[None]:
        """Call ``stop`` (once) if the interrupt is set while the block runs, or at once if it already is.

        ``stop`` runs on the thread that sets the interrupt, so it must be thread-safe (setting
        onnxruntime's ``RunOptions.terminate`` is). While paused, the block waits to start until resumed.
        """
        while True:
            self._running.wait()
            with self._lock:
                if not self._running.is_set():  # paused again meanwhile
                    continue
                already = self._set
                if not already:
                    self._stops.append(stop)
                break
        if already:
            stop()
        try:
            yield
        finally:
            with self._lock:
                if stop in self._stops:
                    self._stops.remove(stop)
