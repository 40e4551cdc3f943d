"""FLAC: the streaming ``flac`` encoder (not a Leg 1 format: the OpenAI-compatible route's
``response_format=flac``). The ``fLaC`` marker and one STREAMINFO block (unknown length) open the first
chunk, then whole FLAC frames. ``av`` (``strands-voice[aac]``) is imported only when an encoder is created.
"""

from __future__ import annotations

from strands_voice_protocol.audio.encoder import MIME_TYPES
from strands_voice_protocol.audio.framed import AvFramedEncoder
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["FlacEncoder"]


class FlacEncoder(AvFramedEncoder):
    """``flac``: a FLAC stream (``fLaC``, STREAMINFO with unknown length, then whole frames).

    Args:
        sample_rate: Input rate.

    Raises:
        AudioEncodingError: the encoder produced no STREAMINFO block.
        MissingDependencyError: PyAV is not installed.
    """

    format = "flac"
    mime_type = MIME_TYPES["flac"]
    _codec_name = "flac"
    _extra = "aac"

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        super().__init__(sample_rate)
        streaminfo = bytes(self._codec.extradata or b"")
        if len(streaminfo) != 34:
            raise AudioEncodingError("the FLAC encoder did not produce a STREAMINFO block")
        # The only metadata block (last-block flag set), type 0 = STREAMINFO, 34 bytes.
        self._stream_header: bytes | None = b"fLaC" + bytes([0x80, 0, 0, 34]) + streaminfo

    def _header(self) -> bytes:
        header, self._stream_header = self._stream_header or b"", None
        return header

    def _wrap(self, packet: bytes) -> bytes:
        return packet
