"""What an engine returns for one segment: its audio and, when known, how long each phoneme lasts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.scheduling.interrupt import close_iterator

__all__ = ["G2PToken", "SegmentTiming", "SpeechSegment", "audio_only", "g2p_tokens", "phoneme_frames"]


@dataclass(frozen=True, slots=True)
class G2PToken:
    """One token from misaki: its text, its phonemes ("" when silent) and the whitespace after it."""

    text: str
    phonemes: str
    whitespace: str


@dataclass(frozen=True, slots=True)
class SegmentTiming:
    """How a segment's audio lines up with its text.

    Attributes:
        text: The sentence the tokens come from.
        text_start: Where :attr:`text` starts in the text the engine was asked to speak.
        tokens: The G2P tokens spoken in this segment, in order.
        phonemes: Exactly the phoneme string sent to the model.
        frames: Duration frames per char of :attr:`phonemes` (0 for a char the model's vocabulary drops).
        lead_frames: Frames of the leading padding token, before the first phoneme.
        frame_samples: Audio samples per frame.
    """

    text: str
    text_start: int
    tokens: tuple[G2PToken, ...]
    phonemes: str
    frames: tuple[int, ...]
    lead_frames: int
    frame_samples: int


@dataclass(frozen=True, slots=True)
class SpeechSegment:
    """One engine step's audio (mono float32 in [-1, 1]) and its timing, when the engine knows it."""

    audio: npt.NDArray[np.float32]
    timing: SegmentTiming | None = None


def g2p_tokens(tokens: Any) -> tuple[G2PToken, ...]:
    """misaki ``MToken`` objects as :class:`G2PToken` (a missing phoneme string counts as silent)."""
    return tuple(G2PToken(str(t.text), str(t.phonemes or ""), str(t.whitespace or "")) for t in tokens)


def phoneme_frames(phonemes: str, durations: Any, vocabulary: Any) -> tuple[tuple[int, ...], int]:
    """Spread the model's per-token durations over the chars of ``phonemes``.

    Args:
        phonemes: The phoneme string sent to the model.
        durations: Frames per model token: the leading pad, one per phoneme char in ``vocabulary``, the
            trailing pad.
        vocabulary: The chars the model keeps (others are dropped before the model).

    Returns:
        ``(frames per char, leading pad frames)``.
    """
    values = [round(float(d)) for d in np.asarray(durations).reshape(-1)]
    frames: list[int] = []
    index = 1
    for char in phonemes:
        if char in vocabulary and index < len(values):
            frames.append(values[index])
            index += 1
        else:
            frames.append(0)
    return tuple(frames), values[0] if values else 0


def audio_only(segments: Iterator[SpeechSegment]) -> Iterator[npt.NDArray[np.float32]]:
    """The audio of each segment (``Engine.synthesize`` from ``synthesize_timed``); closing it closes both."""
    try:
        for segment in segments:
            yield segment.audio
    finally:
        close_iterator(segments)
