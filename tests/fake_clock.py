"""A clock that moves only when the code under test sleeps: retry schedules replay exactly, instantly."""

from __future__ import annotations

import asyncio
from typing import Any

from strands_voice.retry import RetryPolicy


class FakeTime:
    """``clock``/``sleep`` for :class:`~strands_voice.retry.RetryPolicy`; records every sleep."""

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
