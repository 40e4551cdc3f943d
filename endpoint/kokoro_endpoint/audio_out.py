"""Engine output (float32) to the wire: pcm16 bytes split into frames of whole samples."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.audio import float32_to_pcm16

__all__ = ["SampleSkip", "pcm16_frames", "to_pcm16"]


def to_pcm16(audio: npt.NDArray[np.float32]) -> bytes:
    """float32 in [-1, 1] → signed 16-bit little-endian PCM."""
    return float32_to_pcm16(audio)


def pcm16_frames(pcm: bytes, frame_bytes: int) -> Iterator[bytes]:
    """Split PCM into frames of at most ``frame_bytes`` (even, so no sample is split)."""
    for start in range(0, len(pcm), frame_bytes):
        yield pcm[start : start + frame_bytes]


class SampleSkip:
    """Drops the first ``samples`` samples of a request's pcm16, piece by piece (``skip_samples``: resume).

    The request is synthesized whole (the engine's output is a pure function of the request), and only
    what the client does not have yet goes out. Encoded formats skip here too, before the encoder.

    Attributes:
        position: Bytes of the request's PCM seen so far, the skipped ones included (word times and
            offsets stay relative to the request's true start).
    """

    def __init__(self, samples: int) -> None:
        self._left = 2 * samples
        self.position = 0

    def take(self, pcm: bytes) -> bytes:
        """The part of ``pcm`` (the request's next piece) at or after the skip point."""
        self.position += len(pcm)
        if self._left <= 0:
            return pcm
        cut = min(self._left, len(pcm))
        self._left -= cut
        return pcm[cut:]
