"""Engine output (float32) to the wire: pcm16 bytes split into frames of whole samples."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.audio import float32_to_pcm16

__all__ = ["pcm16_frames", "to_pcm16"]


def to_pcm16(audio: npt.NDArray[np.float32]) -> bytes:
    """float32 in [-1, 1] → signed 16-bit little-endian PCM."""
    return float32_to_pcm16(audio)


def pcm16_frames(pcm: bytes, frame_bytes: int) -> Iterator[bytes]:
    """Split PCM into frames of at most ``frame_bytes`` (even, so no sample is split)."""
    for start in range(0, len(pcm), frame_bytes):
        yield pcm[start : start + frame_bytes]
