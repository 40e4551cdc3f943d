"""G.711 for phone lines (Amazon Connect, Twilio): ``mulaw`` (μ-law, PCMU) and ``alaw`` (A-law, PCMA).

8,000 samples a second, one byte a sample, no header. The 24 kHz speech is low-passed and decimated by
:class:`~strands_voice_protocol.audio.downsample.Decimator` (band-limited, not linear), then each sample is
companded with the ITU-T G.711 segment tables (the classic Sun reference ``g711.c``), vectorized. Every
byte is a whole sample, so any chunk decodes on arrival.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Final

import numpy as np
import numpy.typing as npt

from strands_voice_protocol.audio.downsample import Decimator
from strands_voice_protocol.audio.encoder import G711_RATE, MIME_TYPES, StreamEncoderBase
from strands_voice_protocol.audio.pcm import SAMPLE_RATE, pcm16_to_float32
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["G711_RATE", "AlawEncoder", "MulawEncoder", "alaw_encode", "mulaw_decode", "mulaw_encode"]

_MULAW_BIAS: Final = 0x84
_MULAW_CLIP: Final = 32_635
# A-law segment ends on the 13-bit magnitude (pcm >> 3).
_ALAW_SEGMENT_ENDS: Final = np.array([0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF])


def _to_int16(samples: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Float samples in [-1, 1] → 16-bit integer values (as int64, room for the arithmetic below)."""
    array = np.nan_to_num(np.asarray(samples, dtype=np.float64).reshape(-1))
    return np.round(np.clip(array, -1.0, 1.0) * 32767.0).astype(np.int64)


def mulaw_encode(samples: npt.ArrayLike) -> bytes:
    """Float samples in [-1, 1] → μ-law bytes (G.711, PCMU)."""
    pcm = _to_int16(samples)
    sign = np.where(pcm < 0, 0x80, 0x00)
    magnitude = np.minimum(np.abs(pcm), _MULAW_CLIP) + _MULAW_BIAS  # 132 .. 32767
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int64) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return bytes((~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes())


def _mulaw_table() -> npt.NDArray[np.int16]:
    """The 256 16-bit values of the μ-law codes (G.711's expansion, the inverse of :func:`mulaw_encode`)."""
    code = ~np.arange(256, dtype=np.int64) & 0xFF
    exponent = (code >> 4) & 0x07
    magnitude = ((((code & 0x0F) << 3) + _MULAW_BIAS) << exponent) - _MULAW_BIAS
    return np.where(code & 0x80, -magnitude, magnitude).astype(np.int16)


_MULAW_VALUES: Final = _mulaw_table()


def mulaw_decode(data: bytes) -> bytes:
    """μ-law bytes (G.711, PCMU) → pcm16 (s16le) at the same rate: one sample a byte."""
    return _MULAW_VALUES[np.frombuffer(data, dtype=np.uint8)].astype("<i2").tobytes()


def alaw_encode(samples: npt.ArrayLike) -> bytes:
    """Float samples in [-1, 1] → A-law bytes (G.711, PCMA)."""
    pcm = _to_int16(samples) >> 3  # 13 bits
    mask = np.where(pcm >= 0, 0xD5, 0x55)
    magnitude = np.where(pcm >= 0, pcm, -pcm - 1)
    segment = np.searchsorted(_ALAW_SEGMENT_ENDS, magnitude)  # first end >= magnitude; 8 past the last
    shift = np.where(segment < 2, 1, segment)
    value = (np.minimum(segment, 7) << 4) | ((magnitude >> shift) & 0x0F)
    value = np.where(segment >= 8, 0x7F, value)
    return ((value ^ mask) & 0xFF).astype(np.uint8).tobytes()


class _G711Encoder(StreamEncoderBase, ABC):
    """pcm16 at 24 kHz → 8 kHz G.711 bytes, streamed (the companding, μ-law or A-law, is the subclass's)."""

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        super().__init__()
        if sample_rate % G711_RATE:
            raise AudioEncodingError(f"G.711 needs an input rate that is a multiple of {G711_RATE} Hz")
        self._decimator = Decimator(sample_rate // G711_RATE, sample_rate)

    @abstractmethod
    def _compand(self, samples: npt.NDArray[np.float32]) -> bytes:
        """Float samples at 8 kHz → one G.711 byte each."""

    def encode(self, pcm: bytes) -> bytes:
        """Encode more pcm16; returns one byte per 8 kHz sample completed (maybe ``b""``)."""
        return self._compand(self._decimator.process(pcm16_to_float32(self._samples(pcm))))

    def flush(self) -> bytes:
        """The last samples the low-pass filter was holding; the encoder is done after this."""
        self._finish()
        return self._compand(self._decimator.flush())


class MulawEncoder(_G711Encoder):
    """``mulaw``: G.711 μ-law at 8 kHz, one byte a sample, no header."""

    format = "mulaw"
    mime_type = MIME_TYPES["mulaw"]

    def _compand(self, samples: npt.NDArray[np.float32]) -> bytes:
        return mulaw_encode(samples)


class AlawEncoder(_G711Encoder):
    """``alaw``: G.711 A-law at 8 kHz, one byte a sample, no header."""

    format = "alaw"
    mime_type = MIME_TYPES["alaw"]

    def _compand(self, samples: npt.NDArray[np.float32]) -> bytes:
        return alaw_encode(samples)
