"""AAC: the streaming ``aac`` encoder (AAC-LC in ADTS through FFmpeg's native encoder) and the ADTS
frame-header parser.

ADTS is the raw stream Safari and every browser's ``decodeAudioData`` read: each chunk is whole ADTS frames
of 1,024 samples (42.7 ms at 24 kHz), each with its own 7-byte header, so any prefix of whole chunks
decodes. The headers are written here, not by FFmpeg's ``adts`` muxer, because that muxer holds back its
newest frame (as the Ogg muxer does its newest page). ADTS cannot say how many priming samples the encoder
put first, so a decoder returns 1,024 samples (42.7 ms) of encoder delay before the speech, as with any
ADTS stream. ``av`` (``strands-voice[aac]``) is imported only when an encoder is created.
"""

from __future__ import annotations

from typing import Final

from strands_voice_protocol.audio.encoder import MIME_TYPES
from strands_voice_protocol.audio.framed import AvFramedEncoder
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["AacEncoder", "adts_frame_size"]

_AAC_BITRATE: Final = 48_000
#: ADTS sampling-frequency index of each rate (ISO/IEC 14496-3, 1.6.3.4).
_ADTS_RATES: Final = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350)
_ADTS_HEADER: Final = 7


class AacEncoder(AvFramedEncoder):
    """``aac``: AAC-LC in ADTS (FFmpeg's native encoder through PyAV); each chunk is whole ADTS frames.

    Args:
        sample_rate: Input rate (24 kHz; must be one of the ADTS rates).
        bitrate: Target bitrate in bits per second.

    Raises:
        AudioEncodingError: ADTS has no index for ``sample_rate``.
        MissingDependencyError: PyAV is not installed (``strands-voice[aac]``).
    """

    format = "aac"
    mime_type = MIME_TYPES["aac"]
    _codec_name = "aac"
    _sample_format = "fltp"
    _extra = "aac"

    def __init__(self, sample_rate: int = SAMPLE_RATE, bitrate: int = _AAC_BITRATE) -> None:
        if sample_rate not in _ADTS_RATES:
            raise AudioEncodingError(f"AAC in ADTS cannot carry {sample_rate} Hz")
        super().__init__(sample_rate, bitrate)
        self._rate_index = _ADTS_RATES.index(sample_rate)

    def _wrap(self, packet: bytes) -> bytes:
        length = len(packet) + _ADTS_HEADER
        if length >= 1 << 13:
            raise AudioEncodingError("an AAC frame is too large for ADTS")
        header = (
            (0xFFF << 44)  # syncword
            | (0b0001 << 40)  # MPEG-4, layer 0, protection absent
            | (1 << 38)  # profile: AAC-LC (object type 2, minus 1)
            | (self._rate_index << 34)
            | (1 << 30)  # channel configuration: mono
            | (length << 13)
            | (0x7FF << 2)  # buffer fullness: variable bitrate
        )
        return header.to_bytes(_ADTS_HEADER, "big") + packet


def adts_frame_size(header: bytes | bytearray) -> int | None:
    """Size in bytes (header included) of the ADTS frame starting with this 7-byte header, None if not one."""
    if len(header) < _ADTS_HEADER or header[0] != 0xFF or header[1] & 0xF6 != 0xF0:
        return None
    size = ((header[3] & 0x03) << 11) | (header[4] << 3) | (header[5] >> 5)
    return size if size >= _ADTS_HEADER else None
