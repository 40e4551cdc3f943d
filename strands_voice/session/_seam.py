"""The seam of a resumed request: where audio from a new connection joins what was already delivered.

Sans-I/O: no asyncio, no transport; the TTS session (and a later sans-I/O session core) feeds it bytes.

A request cut mid-audio is sent again with Leg 1 ``skip_samples``, so the endpoint sends its audio from
the sample where delivery stopped. One code path serves every engine:

- the session asks for :data:`OVERLAP_SAMPLES` (5 ms) before the cut point too, and drops them again: they
  are the audio the listener already has, played again by the new run;
- the difference between the two runs at the last overlapping sample is the step a player would hear
  at the join; it is faded out over the next :data:`OVERLAP_SAMPLES` of new audio (a linear ramp added to
  the new run, so the first new sample continues the old run and the fifth millisecond is the new
  run's own). The seam region is at most 10 ms: 5 ms of overlap already heard, 5 ms of ramp.

A bit-exact engine (the int8 ONNX graph: same text, voice, speed and window plan give the same samples)
has a step of zero: the delivered audio equals an undisturbed run sample for sample. An engine that is
not bit-exact across runs (torch on a GPU) gets the ramp instead of a click.
"""

from __future__ import annotations

import sys
from array import array
from typing import Final

#: Samples asked again before the cut point, and samples the step is faded over (5 ms at 24 kHz).
OVERLAP_SAMPLES: Final = 120

_BYTES_PER_SAMPLE: Final = 2


def _samples(data: bytes) -> array[int]:
    """pcm16 (little-endian) bytes as signed samples."""
    samples = array("h", data)
    if sys.byteorder == "big":
        samples.byteswap()
    return samples


def _pcm(samples: array[int]) -> bytes:
    if sys.byteorder == "big":
        samples = array("h", samples)
        samples.byteswap()
    return samples.tobytes()


def keep_tail(tail: bytes, data: bytes) -> bytes:
    """The last :data:`OVERLAP_SAMPLES` samples of ``tail + data`` (what a seam compares against)."""
    keep = OVERLAP_SAMPLES * _BYTES_PER_SAMPLE
    if len(data) >= keep:
        return data[-keep:]
    return (tail + data)[-keep:]


class Seam:
    """Joins a resumed answer (audio from ``skip_samples`` on) to the ``delivered`` bytes already given.

    Args:
        delivered: pcm16 bytes of the request already given to the listener.
        tail: The last bytes given (at least :data:`OVERLAP_SAMPLES` samples when that many were given).

    Attributes:
        skip_samples: What the resumed request asks the endpoint to skip.
    """

    def __init__(self, delivered: int, tail: bytes) -> None:
        given = delivered // _BYTES_PER_SAMPLE
        overlap = min(OVERLAP_SAMPLES, len(tail) // _BYTES_PER_SAMPLE, given)
        self.skip_samples = given - overlap
        self._old = tail[len(tail) - overlap * _BYTES_PER_SAMPLE :] if overlap else b""
        self._resent = bytearray()  # the new run's copy of the overlap, as it arrives
        self._step = 0.0
        self._ramped = 0  # new samples the ramp has covered so far

    @property
    def joined(self) -> bool:
        """True once the overlap is consumed and the ramp is done: the rest passes unchanged."""
        return len(self._resent) >= len(self._old) and (self._step == 0.0 or self._ramped >= OVERLAP_SAMPLES)

    def feed(self, data: bytes) -> bytes:
        """The part of the resumed answer's next audio bytes the listener gets (overlap dropped, step faded).

        Args:
            data: The next audio of the resumed answer (whole samples).
        """
        missing = len(self._old) - len(self._resent)
        if missing > 0:
            self._resent += data[:missing]
            data = data[missing:]
            if len(self._resent) == len(self._old) and self._old:
                self._step = float(_samples(self._old)[-1] - _samples(bytes(self._resent))[-1])
        if not data or self._step == 0.0 or self._ramped >= OVERLAP_SAMPLES:
            return data
        samples = _samples(data)
        count = min(OVERLAP_SAMPLES - self._ramped, len(samples))
        for offset in range(count):
            weight = (OVERLAP_SAMPLES - self._ramped - offset) / (OVERLAP_SAMPLES + 1)
            samples[offset] = max(-32768, min(32767, round(samples[offset] + self._step * weight)))
        self._ramped += count
        return _pcm(samples)
