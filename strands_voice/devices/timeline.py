"""Sound on a clock: where a stream's samples are in time, and what the speakers played when (sans-I/O).

A device hands its audio over in blocks, each with the time PortAudio gives for its first sample (when it
is heard, for an output; when it was captured, for an input). Those times jitter from block to block (the
callback runs when the system gets to it), but the samples themselves are contiguous: the device plays and
records at its own steady rate. :class:`Timeline` keeps a stream contiguous (sample ``i`` is heard at
``origin + i / rate``) and moves its origin only when a block's time is further off than ``tolerance_s``
(an underrun, a stream that restarted). :class:`PlayedAudio` is the speakers' side: the samples handed to
the device, on their timeline, so the echo canceller can ask what was heard at any moment of the last few
seconds, at the microphone's rate.
"""

from __future__ import annotations

import threading
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["PlayedAudio", "Timeline"]

#: A block whose time is within this of where the stream's rate puts it continues the stream.
TOLERANCE_S: Final = 0.04


class Timeline:
    """A contiguous stream of samples anchored to a clock.

    Args:
        rate: The stream's sample rate.
        tolerance_s: How far a block's time may be from where the stream's rate puts it and still continue
            it; beyond that the block starts the stream anew at its own time.
    """

    def __init__(self, rate: int, tolerance_s: float = TOLERANCE_S) -> None:
        if rate <= 0 or tolerance_s < 0:
            raise ValueError("rate must be positive and tolerance_s not negative")
        self.rate = rate
        self.tolerance_s = tolerance_s
        self.origin: float | None = None  # the time of sample 0
        self.end = 0  # the index of the next sample
        self.restarts = 0  # blocks that were too far off to continue the stream

    def time_of(self, index: float) -> float:
        """The time of sample ``index`` (the stream must have begun)."""
        if self.origin is None:
            raise RuntimeError("no block placed yet")
        return self.origin + index / self.rate

    def index_at(self, at: float) -> float:
        """The (fractional) sample index of time ``at`` (the stream must have begun)."""
        if self.origin is None:
            raise RuntimeError("no block placed yet")
        return (at - self.origin) * self.rate

    def place(self, count: int, at: float) -> int:
        """A block of ``count`` samples whose first is at ``at``: returns its first sample's index.

        The block continues the stream when ``at`` is within the tolerance of where the stream's rate puts
        its end; otherwise the stream is re-anchored so that the block starts at ``at`` (later than the end:
        a gap of silence is skipped over; earlier: the timeline moves back).
        """
        if self.origin is None:
            self.origin = at
        elif abs(at - self.time_of(self.end)) > self.tolerance_s:
            self.restarts += 1
            skipped = round(self.index_at(at)) - self.end
            if skipped > 0:
                self.end += skipped
            else:
                self.origin = at - self.end / self.rate
        start = self.end
        self.end += count
        return start


class PlayedAudio:
    """What the speakers played, on their timeline: the echo canceller's reference (thread-safe).

    The output device's thread writes each block as it leaves for the device (:meth:`write`); the
    microphone's reader asks what was heard at a time (:meth:`read`), resampled to its own rate.

    Args:
        rate: The speakers' sample rate.
        keep_s: How much of the past is kept (reads further back get silence).
    """

    def __init__(self, rate: int, keep_s: float = 4.0) -> None:
        self._keep_s = keep_s
        self._lock = threading.Lock()
        self.restart(rate)

    def restart(self, rate: int) -> None:
        """Forget what was played: the speakers play at ``rate`` from now on (a new stream)."""
        timeline = Timeline(rate)
        samples = np.zeros(max(1, round(self._keep_s * rate)), dtype=np.float32)
        with self._lock:
            self.timeline, self._samples = timeline, samples

    @property
    def rate(self) -> int:
        """The speakers' sample rate."""
        return self.timeline.rate

    def write(self, pcm16: bytes, at: float) -> None:
        """A block of mono pcm16 handed to the device; its first sample is heard at ``at``."""
        block = np.frombuffer(pcm16, dtype="<i2").astype(np.float32)
        size = len(self._samples)
        with self._lock:
            previous_end = self.timeline.end
            start = self.timeline.place(len(block), at)
            # A gap the timeline skipped over was silence (the device played none of ours).
            self._put(previous_end, np.zeros(min(max(0, start - previous_end), size), dtype=np.float32))
            self._put(start, block[-size:] if len(block) > size else block)

    def written_until(self) -> float | None:
        """When the last sample written so far is heard (None: nothing written since the last restart)."""
        with self._lock:
            if self.timeline.origin is None:
                return None
            return self.timeline.time_of(self.timeline.end)

    def read(self, at: float, count: int, rate: int) -> npt.NDArray[np.float32]:
        """``count`` samples at ``rate`` of what was heard from time ``at`` on (silence where nothing was).

        Linear interpolation between the speakers' samples: a reference for the echo canceller, not a
        band-limited resampler.
        """
        with self._lock:
            if self.timeline.origin is None:
                return np.zeros(count, dtype=np.float32)
            first = self.timeline.index_at(at)
            positions = first + np.arange(count) * (self.rate / rate)
            below = np.floor(positions).astype(np.int64)
            fraction = (positions - below).astype(np.float32)
            before, after = self._get(below), self._get(below + 1)
        return before + (after - before) * fraction

    def _put(self, start: int, block: npt.NDArray[np.float32]) -> None:
        if len(block):
            slots = (start + np.arange(len(block))) % len(self._samples)
            self._samples[slots] = block

    def _get(self, indices: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The samples at absolute ``indices``; silence for those not written or no longer kept."""
        kept = (indices < self.timeline.end) & (indices >= max(0, self.timeline.end - len(self._samples)))
        values = np.zeros(len(indices), dtype=np.float32)
        values[kept] = self._samples[indices[kept] % len(self._samples)]
        return values
