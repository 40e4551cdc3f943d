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

import collections
import statistics
import threading
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["PlayedAudio", "Timeline"]

#: How far the blocks' times may disagree with the count of their samples before the clock follows them.
TOLERANCE_S: Final = 0.015
#: How many blocks in a row must agree on another time before the clock follows them.
WINDOW: Final = 4


class Timeline:
    """A contiguous stream of samples anchored to a clock.

    PortAudio's times for a block are right as a rule, but not always: they jump about while a stream
    starts, and now and then under load, while the samples themselves stay contiguous. So the stream's
    samples are counted, and its clock moves only when the device says it missed samples (an underrun or
    overflow: the gap is skipped, by the block's time) or when ``window`` blocks in a row agree with each
    other and not with the count (beyond ``tolerance_s``: a stream that started with wrong times, a gap the
    device did not report, two devices' clocks drifting apart). A wild time now and then moves nothing.

    Args:
        rate: The stream's sample rate.
        tolerance_s: How far the blocks' times may be from where the count puts them.
        window: How many blocks in a row must agree on another time before the clock follows them.
    """

    def __init__(self, rate: int, tolerance_s: float = TOLERANCE_S, window: int = WINDOW) -> None:
        if rate <= 0 or tolerance_s < 0 or window < 1:
            raise ValueError("rate and window must be positive and tolerance_s not negative")
        self.rate = rate
        self.tolerance_s = tolerance_s
        self.origin: float | None = None  # the time of sample 0
        self.end = 0  # the index of the next sample
        self.gaps = 0  # samples missed by the device (reported), skipped over
        self.restarts = 0  # times the clock moved because the blocks' times disagreed with the count
        self._offsets: collections.deque[float] = collections.deque(maxlen=window)

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

    def place(self, count: int, at: float, missed: bool = False) -> int:
        """A block of ``count`` samples whose first is at ``at``: returns its first sample's index.

        Args:
            count: The block's samples.
            at: The device's time for its first sample.
            missed: The device reported missing samples before this block (an underrun or an overflow).
        """
        if self.origin is None:
            self.origin = at
        else:
            offset = at - self.time_of(self.end)
            if missed and offset > 0:
                self.gaps += round(offset * self.rate)
                self.end += round(offset * self.rate)
                self._offsets.clear()
            else:
                self._offsets.append(offset)
                agreed = max(self._offsets) - min(self._offsets) <= self.tolerance_s
                drift = statistics.median(self._offsets)
                if len(self._offsets) == self._offsets.maxlen and agreed and abs(drift) > self.tolerance_s:
                    self.restarts += 1
                    self.origin += drift
                    self._offsets.clear()
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

    def write(self, pcm16: bytes, at: float, missed: bool = False) -> None:
        """A block of mono pcm16 handed to the device; its first sample is heard at ``at`` (``missed``: the
        device reported an underrun before it)."""
        block = np.frombuffer(pcm16, dtype="<i2").astype(np.float32)
        size = len(self._samples)
        with self._lock:
            previous_end = self.timeline.end
            start = self.timeline.place(len(block), at, missed)
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
