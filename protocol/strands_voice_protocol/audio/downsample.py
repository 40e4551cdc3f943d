"""Band-limited streaming decimation of 24 kHz speech to 8 kHz (phone lines), sans-I/O.

Dropping two samples in three (or interpolating linearly) would fold everything between 4 and 12 kHz
back into the telephone band as hiss. :class:`Decimator` first low-passes with a Kaiser-windowed sinc FIR
(flat to about 3.1 kHz, at least 80 dB down from 4 kHz), then keeps every third sample. It keeps the
filter's history between calls, so the output of a stream cut into any chunks is the same as the output
of the whole stream, and it compensates the filter's delay so sample ``m`` of the output is input sample
``3 m``.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["Decimator", "lowpass_taps"]

#: Filter length: odd, so the delay is a whole number of samples.
TAPS: Final = 161
#: Kaiser window shape (about 85 dB stopband attenuation).
KAISER_BETA: Final = 8.6


def lowpass_taps(cutoff_hz: float, rate: int, taps: int = TAPS) -> npt.NDArray[np.float64]:
    """A linear-phase low-pass FIR: a windowed sinc with unity gain at DC.

    Args:
        cutoff_hz: Where the response is -6 dB (the middle of the transition band).
        rate: The input sample rate.
        taps: The filter length (odd).
    """
    if taps % 2 == 0 or not 0 < cutoff_hz < rate / 2:
        raise ValueError("need an odd tap count and 0 < cutoff < rate / 2")
    relative = 2.0 * cutoff_hz / rate
    n = np.arange(taps) - (taps - 1) / 2
    h = relative * np.sinc(relative * n) * np.kaiser(taps, KAISER_BETA)
    taps_array: npt.NDArray[np.float64] = h / h.sum()
    return taps_array


class Decimator:
    """Low-pass then keep one sample in ``factor``, across calls (24 kHz → 8 kHz by default).

    Args:
        factor: The integer rate ratio.
        rate: The input rate (for the cutoff).
        cutoff_hz: The filter's -6 dB point; a little below the output's Nyquist frequency.
    """

    def __init__(self, factor: int = 3, rate: int = 24_000, cutoff_hz: float = 3_550.0) -> None:
        if factor < 1:
            raise ValueError("factor must be positive")
        self.factor = factor
        self._taps = lowpass_taps(cutoff_hz, rate)
        self._delay = (len(self._taps) - 1) // 2
        # The last len(taps) - 1 input samples (zeros before the stream: the filter starts at rest).
        self._history = np.zeros(len(self._taps) - 1, dtype=np.float64)
        self._consumed = 0  # input samples seen
        self._next = self._delay  # filtered-stream index of the next output sample (3 m + delay)

    def process(self, samples: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Filter and decimate more input; returns the output samples it completes (maybe none)."""
        block = np.asarray(samples, dtype=np.float64).reshape(-1)
        if not block.size:
            return np.zeros(0, dtype=np.float32)
        buffer = np.concatenate([self._history, block])
        filtered = np.convolve(buffer, self._taps, mode="valid")  # one value per input sample of block
        start = self._next - self._consumed
        out = filtered[start :: self.factor] if start < len(filtered) else filtered[:0]
        self._next += self.factor * len(out)
        self._consumed += block.size
        self._history = buffer[-(len(self._taps) - 1) :]
        return out.astype(np.float32)

    def flush(self) -> npt.NDArray[np.float32]:
        """The output still held by the filter's delay (the stream's last few milliseconds)."""
        # Outputs stand for input samples 0, factor, 2 factor, ... below the stream's end.
        owed = -(-self._consumed // self.factor) - (self._next - self._delay) // self.factor
        tail = self.process(np.zeros(self._delay, dtype=np.float64))
        return tail[: max(0, owed)]
