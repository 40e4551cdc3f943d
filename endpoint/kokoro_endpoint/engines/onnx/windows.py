"""Windowed decoding plan and stitching (pure): a segment's audio in overlapping windows of frames.

Kokoro's decoder is a convolutional vocoder, so a window of frames decoded with some context on each side
matches the whole-segment decode closely inside the window. The windows grow (a small first one, so the
first audio comes quickly; bigger ones after, so the context costs little), and neighbouring windows
overlap by ``crossfade`` samples that are cross-faded (weights summing to one), so the seam does not click.

A segment after its request's first starts with a larger window (``produced``): the audio before it
plays while that window is decoded.

The plan also says where a long sentence's encoder run is cut (:meth:`WindowPlan.encoder_pieces`): the
encoder's cost grows with the sentence, and the first window waits for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError

from kokoro_endpoint.text.segmentation import MAX_PHONEMES, split_phonemes

__all__ = ["Window", "WindowPlan", "WindowStitcher"]


@dataclass(frozen=True, slots=True)
class Window:
    """One decoder call: frames ``[start, stop)`` are kept; ``[lo, hi)`` are decoded (with context)."""

    start: int
    stop: int
    lo: int
    hi: int


@dataclass(frozen=True)
class WindowPlan:
    """How a segment's frames are cut into windows.

    Attributes:
        first: Frames in the first window (before its right context).
        growth: Each later window is this many times the previous one ...
        largest: ... up to this many frames (5 s: a later phrase of a usual sentence's length is decoded
            whole, and the largest window's activations bound the decoder's memory).
        context: Frames decoded on each side of a window and thrown away.
        first_context: Frames decoded after the first window (its right context): fewer than ``context``
            because the first window is on the path to the first heard sound; its one seam is still
            cross-faded and checked (``tests/endpoint/engines/test_heard.py``).
        smallest: A last window shorter than this joins the one before it.
        lead_frames: Frames of the model's leading silence (the pad token's frames) decoded before the
            first window's speech; the earlier ones are sent as zeros without being decoded.
        whole_frames: A segment of at most this many frames is decoded whole, lead-in included, as before
            the first window shrank: windows would save little there, and a short word's audio
            (and so its trimmed length) stays what it was.
        head_phonemes: A sentence of more than twice this many phonemes runs the encoder on its head (at
            most this many, cut at the best boundary) as a segment of its own, then on the rest: the
            first window no longer waits for a long sentence's whole encoder run. 0 keeps sentences whole.
    """

    first: int = 12
    growth: float = 2.0
    largest: int = 200
    context: int = 16
    first_context: int = 6
    smallest: int = 12
    lead_frames: int = 6
    whole_frames: int = 48
    head_phonemes: int = 64

    def __post_init__(self) -> None:
        if min(self.first, self.largest, self.smallest) < 1:
            raise ConfigurationError("window sizes must be positive")
        if min(self.context, self.first_context, self.lead_frames) < 0:
            raise ConfigurationError("window sizes must be positive")
        if self.growth < 1:
            raise ConfigurationError("growth must be at least 1")
        if self.head_phonemes < 0:
            raise ConfigurationError("head_phonemes must not be negative")

    def encoder_pieces(self, phonemes: str) -> list[str]:
        """A sentence's phonemes in encoder runs: its head alone when the sentence is long, then the rest.

        Every piece is at most :data:`~kokoro_endpoint.text.segmentation.MAX_PHONEMES` long; each is a pure
        function of the phonemes, so a resumed request cuts them exactly as before.
        """
        head = self.head_phonemes
        if not head or len(phonemes.strip()) <= 2 * head:
            return split_phonemes(phonemes, MAX_PHONEMES)
        first = split_phonemes(phonemes, head)[0]
        rest = phonemes.strip()[len(first) :]
        return [first, *split_phonemes(rest, MAX_PHONEMES)]

    def windowed(self, frames: int) -> bool:
        """Whether a segment of ``frames`` frames is worth more than one window."""
        return frames > max(self.whole_frames, self.first + self.context + self.smallest)

    def windows(self, frames: int, produced: int = 0) -> Iterator[Window]:
        """The windows covering ``[0, frames)`` in order (one window when the segment is short).

        Args:
            frames: The segment's frames.
            produced: Frames of audio its request produced before it: the first window is as large
                (between ``first`` and ``largest``, with the full context), since that audio plays while
                it is decoded; a segment of at most that many frames (plus ``smallest``) is one window.
        """
        if not self.windowed(frames):
            yield Window(0, frames, 0, frames)
            return
        start, size = 0, self.first if produced <= 0 else min(self.largest, max(self.first, produced))
        while start < frames:
            stop = min(frames, start + size)
            if frames - stop < self.smallest:
                stop = frames
            right = self.first_context if start == 0 and produced <= 0 else self.context
            yield Window(start, stop, max(0, start - self.context), min(frames, stop + right))
            start = stop
            size = min(self.largest, max(self.smallest, size + 1, round(size * self.growth)))


class WindowStitcher:
    """Joins windows' audio into one stream, cross-fading each seam over ``crossfade`` samples.

    The seam between two windows is centred on their shared frame boundary, so every window must be
    decoded with at least ``crossfade / 2`` samples of context on each inner side.

    Args:
        hop: Samples per frame.
        total: Samples in the whole segment.
        crossfade: Samples cross-faded at each seam (rounded down to even).
    """

    def __init__(self, hop: int, total: int, crossfade: int = 240) -> None:
        self._hop = hop
        self._total = total
        self._half = max(0, crossfade // 2)
        self._tail = np.zeros(0, dtype=np.float32)  # the previous window's part of the next seam

    def add(self, window: Window, audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Take one window's decoded audio (of frames ``[lo, hi)``); return the samples final now.

        Raises:
            ValueError: the audio is not ``(hi - lo) * hop`` samples long, or the context is too short
                for the cross-fade.
        """
        hop, half = self._hop, self._half
        if len(audio) != (window.hi - window.lo) * hop:
            raise ValueError("window audio has the wrong length")
        first = window.start * hop - (half if window.start > 0 else 0)
        last_window = window.stop * hop >= self._total
        end = window.stop * hop + (0 if last_window else half)
        if first < window.lo * hop or end > window.hi * hop:
            raise ValueError("window context is shorter than half the cross-fade")
        piece = audio[first - window.lo * hop : end - window.lo * hop].astype(np.float32, copy=True)
        overlap = len(self._tail)
        if overlap:
            fade = (np.arange(overlap, dtype=np.float32) + 0.5) / overlap
            piece[:overlap] = piece[:overlap] * fade + self._tail * (1.0 - fade)
        if last_window or not half:
            self._tail = np.zeros(0, dtype=np.float32)
            return piece
        self._tail = piece[len(piece) - 2 * half :].copy()
        return piece[: len(piece) - 2 * half]
