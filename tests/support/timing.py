"""Relative-cost checks that a busy 2-core machine cannot fail by luck.

A complexity test compares the cost of the input under test with a baseline measured in the same
process, so a slow machine slows both alike. One sample of each can still catch a stall (another
process, a GC pause) on one side only; the best of a few samples cannot be inflated by a stall unless
every sample is. The bounds stay an order of magnitude below what the bug they guard against costs.
"""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time[T](run: Callable[[], T], repeats: int = 3) -> tuple[float, T]:
    """The shortest wall time of ``repeats`` calls of ``run`` and the last call's result."""
    best = float("inf")
    result: T
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result
