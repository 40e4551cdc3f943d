"""Time fakes: a clock that moves only when the code under test sleeps (:class:`FakeTime`), and an asyncio
event loop on virtual time (:class:`VirtualTimeLoop`).

- :class:`FakeTime` gives ``clock``/``sleep`` to code that takes them (:class:`RetryPolicy`): retry
  schedules replay exactly, instantly.
- :class:`VirtualTimeLoop` steps real asyncio code through a scenario: time moves only when the test moves
  it (:attr:`VirtualTimeLoop.now`), so a timer fires exactly when the scenario says and a 30 s timeout takes
  no time at all. The loop never waits for I/O: everything the code under test waits for is a future the
  test resolves. :func:`settle` lets every other task run until none can, which is the moment a
  step-by-step test gives its next input.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Callable
from contextvars import Context
from typing import Any

from strands_voice.session._retry import RetryPolicy

__all__ = ["FakeTime", "VirtualTimeLoop", "settle"]


class FakeTime:
    """``clock``/``sleep`` for :class:`~strands_voice.session.RetryPolicy`; records every sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)

    def policy(self, **options: Any) -> RetryPolicy:
        """A policy on this clock whose jitter draws are always 0.5 (each delay x 0.75)."""
        return RetryPolicy(clock=self.clock, sleep=self.sleep, random=lambda: 0.5, **options)


class _NoWaitSelector(selectors.DefaultSelector):
    """Polls instead of waiting: a loop on virtual time has nothing worth sleeping for."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        del timeout
        return super().select(0)


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose clock is :attr:`now` (seconds, moved by the test)."""

    def __init__(self) -> None:
        super().__init__(_NoWaitSelector())
        self.now = 0.0
        self._timers: set[asyncio.TimerHandle] = set()

    def time(self) -> float:
        return self.now

    def call_at(
        self, when: float, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.TimerHandle:
        handle: asyncio.TimerHandle

        def fire(*fire_args: Any) -> None:
            self._timers.discard(handle)
            callback(*fire_args)

        handle = super().call_at(when, fire, *args, context=context)
        self._timers.add(handle)
        return handle

    def next_timer(self) -> float | None:
        """When the earliest pending timer is due, if any is pending."""
        pending = [handle.when() for handle in self._timers if not handle.cancelled()]
        return min(pending, default=None)

    def idle(self) -> bool:
        """Whether no callback is ready to run and no timer is due (only the caller of this is running)."""
        due = self.next_timer()
        # ``_ready`` is the base loop's queue of callbacks to run in its next iteration.
        return not self._ready and (due is None or due > self.now)  # type: ignore[attr-defined]


async def settle(max_rounds: int = 100_000) -> None:
    """Yield to the other tasks until none can run (the clock stands still meanwhile).

    Raises:
        AssertionError: they were still running after ``max_rounds`` rounds (a busy loop).
    """
    loop = asyncio.get_running_loop()
    assert isinstance(loop, VirtualTimeLoop), "settle() runs on a VirtualTimeLoop"
    for _ in range(max_rounds):
        await asyncio.sleep(0)
        if loop.idle():
            return
    raise AssertionError("the tasks never settled")
