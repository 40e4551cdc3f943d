"""What a streaming engine yields: audio pieces that know where their segment ends."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["SpeechPiece"]


@dataclass(frozen=True, slots=True, eq=False)
class SpeechPiece:
    """Part of one segment's audio, as soon as the engine has it.

    Attributes:
        audio: Mono float32 samples at the engine's sample rate (may be empty).
        segment_end: This is the segment's last piece.
        durations: On a segment's first piece, when the engine knows them: the frames (600 samples,
            25 ms at 24 kHz) the model gave each token of ``[pad, *tokens, pad]``; else None.
        phonemes: On a segment's first piece: the phonemes those tokens spell (one character per token,
            pads excluded); else "".
    """

    audio: npt.NDArray[np.float32]
    segment_end: bool
    durations: npt.NDArray[np.int64] | None = None
    phonemes: str = ""
