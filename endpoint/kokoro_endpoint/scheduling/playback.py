"""A listener's playback clock: when the audio produced for it so far runs out (deadline scheduling)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "Playback"]

#: Monotonic seconds (a fake clock in tests).
Clock = Callable[[], float]


class Playback:
    """One listener's playback clock: when the audio produced for it so far runs out.

    Audio is assumed to play at real-time speed from the moment it is produced (the session sends it at
    once); when the listener has run out, playback restarts with the next audio (a stall).

    Args:
        clock: Monotonic seconds.
        session: A WebSocket session's listener (engaged between its requests while its audio plays).
    """

    def __init__(self, clock: Clock = time.monotonic, session: bool = False) -> None:
        self._clock = clock
        # A WebSocket session's listener: its next sentence may come while this one plays, so it stays
        # engaged (admission) between its requests until the session ends.
        self.session = session
        self.runs_out_at: float | None = None
        self.audio_s = 0.0
        self.streams: set[int] = set()  # the orders of its open streams (kept by the scheduler)

    def add(self, seconds: float) -> None:
        """Audio of ``seconds`` was produced for this listener now."""
        now = self._clock()
        start = now if self.runs_out_at is None else max(self.runs_out_at, now)
        self.runs_out_at = start + seconds
        self.audio_s += seconds

    def deadline(self, since: float) -> float:
        """When this listener needs its next audio, for a request that arrived at ``since``."""
        return since if self.runs_out_at is None else max(self.runs_out_at, since)

    def buffered_s(self) -> float:
        """Seconds of audio the listener has left to hear."""
        return 0.0 if self.runs_out_at is None else max(0.0, self.runs_out_at - self._clock())
