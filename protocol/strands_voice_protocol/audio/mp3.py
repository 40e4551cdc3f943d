"""MP3: the streaming ``mp3`` encoder (CBR MPEG-2 Layer III through lameenc) and the frame-header parser
that cuts LAME's output into whole frames (576 samples each at 24 kHz).

``lameenc`` (``strands-voice[mp3]``) is imported only when an encoder is created.
"""

from __future__ import annotations

from typing import Any, Final

from strands_voice_protocol.audio.encoder import MIME_TYPES, StreamEncoderBase, missing_extra
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["Mp3Encoder", "mp3_frame_size"]

_MP3_BITRATE_KBPS: Final = 48
_MP3_BITRATES: Final = {
    3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),  # MPEG-1 Layer III
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),  # MPEG-2/2.5 Layer III
}
_MP3_RATES: Final = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


def mp3_frame_size(header: bytes | bytearray) -> int | None:
    """Size in bytes of the MPEG Layer III frame starting with this 4-byte header, None if not one."""
    if len(header) < 4:
        return None
    value = int.from_bytes(header[:4], "big")
    if value >> 21 != 0x7FF:
        return None
    version, layer = (value >> 19) & 3, (value >> 17) & 3
    bitrate_index, rate_index, padding = (value >> 12) & 15, (value >> 10) & 3, (value >> 9) & 1
    if version == 1 or layer != 1 or bitrate_index in (0, 15) or rate_index == 3:
        return None
    bitrate = _MP3_BITRATES[3 if version == 3 else 2][bitrate_index] * 1000
    rate = _MP3_RATES[version][rate_index]
    return (144 if version == 3 else 72) * bitrate // rate + padding


class Mp3Encoder(StreamEncoderBase):
    """``mp3``: CBR MPEG-2 Layer III via lameenc; each chunk is whole frames.

    Args:
        sample_rate: Input rate (24 kHz: MPEG-2, 576 samples per frame).
        bitrate_kbps: Constant bitrate.

    Raises:
        MissingDependencyError: lameenc is not installed (``strands-voice[mp3]``).
    """

    format = "mp3"
    mime_type = MIME_TYPES["mp3"]

    def __init__(self, sample_rate: int = SAMPLE_RATE, bitrate_kbps: int = _MP3_BITRATE_KBPS) -> None:
        super().__init__()
        try:
            import lameenc
        except ImportError:
            raise missing_extra("lameenc", "mp3") from None
        self._encoder: Any = lameenc.Encoder()
        self._encoder.set_bit_rate(bitrate_kbps)
        self._encoder.set_in_sample_rate(sample_rate)
        self._encoder.set_channels(1)
        self._encoder.set_quality(5)  # 2 is best, 7 fastest; 5 is LAME's default speed/quality trade-off
        self._out = bytearray()
        self._started = False

    def encode(self, pcm: bytes) -> bytes:
        """Whole MP3 frames for the PCM so far (LAME keeps about a frame plus its look-ahead)."""
        data = self._samples(pcm)
        if not data:
            return b""
        self._started = True
        self._out += bytes(self._encoder.encode(data))
        return self._whole_frames()

    def flush(self) -> bytes:
        """The last frames (the last one padded with silence)."""
        self._finish()
        if self._started:
            self._out += bytes(self._encoder.flush())
        out = self._whole_frames()
        if self._out:
            raise AudioEncodingError("the MP3 encoder ended with a partial frame")
        return out

    def _whole_frames(self) -> bytes:
        # LAME's output buffer is not frame-aligned: hand out complete frames, keep the partial tail.
        end = 0
        buf = self._out
        while True:
            size = mp3_frame_size(buf[end : end + 4])
            if size is None or end + size > len(buf):
                break
            end += size
        out, self._out = bytes(buf[:end]), buf[end:]
        return out
