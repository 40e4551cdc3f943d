"""Raw pcm16: the sample rate every leg speaks, the s16le ↔ float32 conversions and the ``pcm16``
"encoder" (the bytes unchanged)."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from strands_voice_protocol.audio.encoder import MIME_TYPES, StreamEncoderBase
from strands_voice_protocol.errors import AudioEncodingError
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = ["BYTES_PER_SECOND", "SAMPLE_RATE", "Pcm16Encoder", "float32_to_pcm16", "pcm16_to_float32"]

#: Bytes per second of pcm16 mono at :data:`SAMPLE_RATE` (two bytes a sample).
BYTES_PER_SECOND: Final = SAMPLE_RATE * 2


def pcm16_to_float32(pcm: bytes) -> npt.NDArray[np.float32]:
    """Raw s16le samples → float32 in [-1.0, 1.0).

    Raises:
        AudioEncodingError: the byte count is odd (not whole samples).
    """
    if len(pcm) % 2:
        raise AudioEncodingError("pcm16 audio must have an even number of bytes")
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / np.float32(32768.0)


def float32_to_pcm16(samples: npt.ArrayLike) -> bytes:
    """Float samples (clipped to [-1.0, 1.0]) → raw s16le bytes."""
    array = np.asarray(samples, dtype=np.float32).reshape(-1)
    array = np.nan_to_num(array, nan=0.0, posinf=1.0, neginf=-1.0)
    scaled = np.round(np.clip(array, -1.0, 1.0) * 32767.0)
    return scaled.astype("<i2").tobytes()


class Pcm16Encoder(StreamEncoderBase):
    """``pcm16``: returns the bytes unchanged."""

    format = "pcm16"
    mime_type = MIME_TYPES["pcm16"]

    def encode(self, pcm: bytes) -> bytes:
        """Return ``pcm`` as is."""
        if self._done:
            raise AudioEncodingError("the pcm16 encoder was already flushed")
        return bytes(pcm)

    def flush(self) -> bytes:
        """Nothing is buffered: return ``b""``."""
        self._finish()
        return b""
