"""What a streaming engine yields: audio pieces that know where their segment ends."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.speech import SegmentTiming

__all__ = ["SpeechPiece"]


@dataclass(frozen=True, slots=True, eq=False)
class SpeechPiece:
    """Part of one segment's audio, as soon as the engine has it.

    Attributes:
        audio: Mono float32 samples at the engine's sample rate (may be empty).
        segment_end: This is the segment's last piece.
        timing: On a segment's first piece, when the engine knows it: how the segment's audio (from its
            first sample) lines up with its text (for word timestamps); else None.
    """

    audio: npt.NDArray[np.float32]
    segment_end: bool
    timing: SegmentTiming | None = None
