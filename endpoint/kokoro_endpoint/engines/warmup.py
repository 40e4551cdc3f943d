"""Warm an engine up exactly once, however many threads ask (shared by both engines)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["WARM_UP_TEXT", "WarmUpOnce"]

#: One short sentence: enough for onnxruntime's first-run allocations and CUDA's kernel loading.
WARM_UP_TEXT = "Hello."


class WarmUpOnce:
    """Runs a warm-up synthesis the first time :meth:`run` is called; later calls return at once."""

    def __init__(self) -> None:
        self._done = False
        self._lock = threading.Lock()

    def run(self, synthesize: Callable[[str], Iterable[Any]]) -> None:
        """Drain ``synthesize(WARM_UP_TEXT)`` once; concurrent callers wait for the first one."""
        with self._lock:
            if self._done:
                return
            for _ in synthesize(WARM_UP_TEXT):
                pass
            self._done = True
