"""Engine output (float32) to the wire: pcm16 bytes split into frames of whole samples."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.audio import float32_to_pcm16
from strands_voice_protocol.frames import WordTiming

from kokoro_endpoint.text.timestamps import shift_words

__all__ = ["SampleSkip", "pcm16_frames", "to_pcm16"]


def to_pcm16(audio: npt.NDArray[np.float32]) -> bytes:
    """float32 in [-1, 1] → signed 16-bit little-endian PCM."""
    return float32_to_pcm16(audio)


def pcm16_frames(pcm: bytes, frame_bytes: int) -> Iterator[bytes]:
    """Split PCM into frames of at most ``frame_bytes`` (even, so no sample is split)."""
    for start in range(0, len(pcm), frame_bytes):
        yield pcm[start : start + frame_bytes]


class SampleSkip:
    """Drops the first ``samples`` samples of a request's pcm16, segment by segment (``skip_samples``:
    resume).

    The request is synthesized whole (the engine's output is a pure function of the request), and only
    what the client does not have yet goes out. Encoded formats skip here too, before the encoder. Word
    times stay relative to the request's true start, and the words sent are those still (at least partly)
    to be heard: a word that ends before the skip point is not sent; one that ends after it is, before
    the first audio sent (a segment's words ride on the output with its first sound, which may be
    skipped whole).

    Args:
        samples: Samples to skip.
        sample_rate: The engine's rate (word times are in seconds).

    Attributes:
        position: Bytes of the request's PCM seen so far, the skipped ones included.
    """

    def __init__(self, samples: int, sample_rate: int) -> None:
        self._left = 2 * samples
        self._skip_s = samples / sample_rate
        self._bytes_per_second = 2 * sample_rate
        self._words: list[WordTiming] = []
        self.position = 0

    def take(self, pcm: bytes) -> bytes:
        """The part of ``pcm`` (the request's next piece) at or after the skip point."""
        self.position += len(pcm)
        if self._left <= 0:
            return pcm
        cut = min(self._left, len(pcm))
        self._left -= cut
        return pcm[cut:]

    def take_segment(self, pcm: bytes, words: Sequence[WordTiming]) -> tuple[bytes, tuple[WordTiming, ...]]:
        """The segment's audio at or after the skip point, and the words to send before it (on the
        request's timeline; empty while the segment is skipped whole)."""
        starts_at = self.position / self._bytes_per_second
        placed = shift_words(list(words), starts_at)
        self._words.extend(word for word in placed if word.end_s > self._skip_s or self._skip_s == 0)
        kept = self.take(pcm)
        if not kept:
            return b"", ()
        due, self._words = tuple(self._words), []
        return kept, due
