"""The capacity counter: concurrent sessions (WebSocket sessions and /invocations streams) against a limit."""

from __future__ import annotations

import threading

__all__ = ["Capacity"]


class Capacity:
    """Counts concurrent sessions (WebSocket sessions and /invocations streams) against a maximum."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._used = 0
        self._lock = threading.Lock()

    @property
    def in_use(self) -> int:
        """Slots currently held."""
        return self._used

    def try_acquire(self) -> bool:
        """Take a slot if one is free."""
        with self._lock:
            if self._used >= self.limit:
                return False
            self._used += 1
            return True

    def release(self) -> None:
        """Give a slot back."""
        with self._lock:
            if self._used <= 0:
                raise RuntimeError("capacity released more often than acquired")
            self._used -= 1
