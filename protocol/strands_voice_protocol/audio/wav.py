"""WAV (RIFF, PCM s16 mono): headers, whole files, the streaming ``wav`` encoder and reading one back.

A streamed WAV's header cannot know the length, so its RIFF and ``data`` sizes are ``0xFFFFFFFF``
(:data:`STREAMING_WAV_SIZE`, the usual "unknown length" value: readers play until the data ends).
"""

from __future__ import annotations

import os
import struct
from typing import Final

from strands_voice_protocol.audio.encoder import MIME_TYPES, StreamEncoderBase
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["STREAMING_WAV_SIZE", "WavEncoder", "pcm16_to_wav", "wav_header", "wav_to_pcm16", "write_wav"]

#: The RIFF and data sizes written in a streamed WAV header, whose length is not known up front.
STREAMING_WAV_SIZE: Final = 0xFFFFFFFF


def wav_header(data_size: int | None = None, sample_rate: int = SAMPLE_RATE, channels: int = 1) -> bytes:
    """A 44-byte PCM s16 WAV header; ``data_size=None`` writes the streaming size ``0xFFFFFFFF``."""
    if data_size is None:
        riff_size = data_size_field = STREAMING_WAV_SIZE
    else:
        data_size_field = data_size
        riff_size = min(36 + data_size, STREAMING_WAV_SIZE)
    block_align = channels * 2
    return struct.pack(
        "<4sI4s4sIHHIIHH4sI",
        b"RIFF",
        riff_size,
        b"WAVE",
        b"fmt ",
        16,
        1,  # PCM
        channels,
        sample_rate,
        sample_rate * block_align,
        block_align,
        16,
        b"data",
        data_size_field,
    )


def pcm16_to_wav(pcm: bytes, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A complete WAV file (exact sizes) holding mono s16le ``pcm``."""
    return wav_header(len(pcm), sample_rate) + pcm


def write_wav(path: str | os.PathLike[str], pcm: bytes, sample_rate: int = SAMPLE_RATE) -> None:
    """Write mono s16le ``pcm`` as a WAV file."""
    with open(path, "wb") as f:
        f.write(pcm16_to_wav(pcm, sample_rate))


class WavEncoder(StreamEncoderBase):
    """``wav``: one streaming RIFF header (sizes ``0xFFFFFFFF``) at the start of the first chunk, then PCM."""

    format = "wav"
    mime_type = MIME_TYPES["wav"]

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        super().__init__()
        self._header: bytes | None = wav_header(None, sample_rate)

    def _with_header(self, data: bytes) -> bytes:
        if self._header is not None:
            data, self._header = self._header + data, None
        return data

    def encode(self, pcm: bytes) -> bytes:
        """Whole samples of ``pcm``, after the header on the first call that has any."""
        data = self._samples(pcm)
        return self._with_header(data) if data else b""

    def flush(self) -> bytes:
        """The header, if nothing was encoded (an empty WAV); else ``b""``. A dangling odd byte is dropped."""
        self._finish()
        return self._with_header(b"")


def wav_to_pcm16(data: bytes) -> bytes:
    """The samples of a mono 16-bit PCM WAV (whole or streamed, any prefix) as pcm16 at 24 kHz.

    Another sample rate is resampled (:func:`~strands_voice_protocol.audio.resample.resample_linear`).

    Raises:
        AudioEncodingError: not a RIFF/WAVE stream, not mono 16-bit PCM, or no ``data`` chunk.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise AudioEncodingError("not a WAV stream")
    pos = 12
    fmt: tuple[int, ...] | None = None
    while pos + 8 <= len(data):
        chunk_id, size = struct.unpack_from("<4sI", data, pos)
        body = pos + 8
        if chunk_id == b"fmt ":
            fmt = struct.unpack_from("<HHIIHH", data, body)
        elif chunk_id == b"data":
            if fmt is None or fmt[0] != 1 or fmt[1] != 1 or fmt[5] != 16:
                raise AudioEncodingError("only mono 16-bit PCM WAV is supported")
            end = len(data) if size == STREAMING_WAV_SIZE else min(len(data), body + size)
            pcm = data[body : end - (end - body) % 2]
            if fmt[2] != SAMPLE_RATE:
                return resample_linear(pcm, fmt[2])
            return pcm
        pos = body + size + (size & 1)
    raise AudioEncodingError("the WAV stream has no data chunk")
