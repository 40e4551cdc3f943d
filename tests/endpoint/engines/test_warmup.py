"""WarmUpOnce: both engines warm up exactly once, however many threads ask."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from kokoro_endpoint.engines.warmup import WARM_UP_TEXT, WarmUpOnce


def test_runs_once_across_threads_and_later_calls_return_at_once() -> None:
    calls: list[str] = []

    def synthesize(text: str) -> Iterator[int]:
        calls.append(text)
        time.sleep(0.05)  # long enough that the other threads arrive while it runs
        yield from range(3)

    warm = WarmUpOnce()
    threads = [threading.Thread(target=warm.run, args=(synthesize,)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    warm.run(synthesize)
    assert calls == [WARM_UP_TEXT]


def test_a_failed_warm_up_is_tried_again() -> None:
    attempts: list[int] = []

    def synthesize(text: str) -> Iterator[int]:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("first run failed")
        yield 0

    warm = WarmUpOnce()
    try:
        warm.run(synthesize)
    except RuntimeError:
        pass
    warm.run(synthesize)
    warm.run(synthesize)
    assert len(attempts) == 2
