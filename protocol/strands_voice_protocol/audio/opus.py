"""Opus: the streaming ``opus`` encoder, Ogg Opus (RFC 7845) at 48 kHz through PyAV's libopus.

The first chunk carries the ``OpusHead`` and ``OpusTags`` pages; every chunk is whole Ogg pages
(:class:`~strands_voice_protocol.audio.ogg.OggWriter`), so the concatenation of the chunks so far always
decodes. The 24 kHz input is resampled to 48 kHz inside. ``av`` (``strands-voice[opus]``) is imported only
when an encoder is created.
"""

from __future__ import annotations

import os
import struct
from typing import Any, Final

import numpy as np

from strands_voice_protocol.audio.encoder import MIME_TYPES, StreamEncoderBase, missing_extra
from strands_voice_protocol.audio.ogg import OggWriter
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["OpusEncoder"]

_OPUS_RATE: Final = 48_000
_OPUS_FRAME: Final = 960  # 20 ms at 48 kHz
_OPUS_BITRATE: Final = 24_000


class OpusEncoder(StreamEncoderBase):
    """``opus``: Ogg Opus at 48 kHz (resampled inside), one page flush per call so latency stays low.

    The first non-empty chunk starts with the ``OpusHead`` and ``OpusTags`` pages; every chunk is whole
    Ogg pages, so the concatenation of the chunks so far always decodes.

    Args:
        sample_rate: Input rate (resampled to 48 kHz).
        bitrate: Opus bitrate in bits per second (24 kbps VOIP mode suits speech).
        application: libopus application: ``voip``, ``audio`` or ``lowdelay``.

    Raises:
        MissingDependencyError: PyAV is not installed (``strands-voice[opus]``).
        AudioEncodingError: the encoder produced no ``OpusHead``.
    """

    format = "opus"
    mime_type = MIME_TYPES["opus"]

    def __init__(
        self, sample_rate: int = SAMPLE_RATE, bitrate: int = _OPUS_BITRATE, application: str = "voip"
    ) -> None:
        super().__init__()
        try:
            import av
        except ImportError:
            raise missing_extra("av (PyAV)", "opus") from None
        self._av: Any = av
        self._sample_rate = sample_rate
        codec: Any = av.CodecContext.create("libopus", "w")
        codec.sample_rate = _OPUS_RATE
        codec.layout = "mono"
        codec.format = "s16"
        codec.bit_rate = bitrate
        codec.options = {"application": application}
        codec.open()
        self._codec = codec
        head = bytes(codec.extradata or b"")
        if not head.startswith(b"OpusHead") or len(head) < 19:
            raise AudioEncodingError("the Opus encoder did not produce an OpusHead")
        # OpusHead (RFC 7845): record the real input rate (informational) in bytes 12..15.
        self._head = head[:12] + struct.pack("<I", sample_rate) + head[16:]
        self._pre_skip = struct.unpack_from("<H", head, 10)[0]
        self._resampler: Any = av.AudioResampler(format="s16", layout="mono", rate=_OPUS_RATE)
        self._fifo: Any = av.AudioFifo()
        self._ogg = OggWriter(serial=int.from_bytes(os.urandom(4), "little"))
        self._headers_sent = False
        self._samples_in = 0  # 48 kHz samples given to the encoder (what the stream should decode to)
        self._samples_encoded = 0  # 48 kHz samples in encoded packets
        self._input_samples = 0  # input-rate samples received
        self._packets = 0  # Opus packets written

    def _header_pages(self) -> bytes:
        if self._headers_sent:
            return b""
        self._headers_sent = True
        vendor = b"strands-voice"
        tags = b"OpusTags" + struct.pack("<I", len(vendor)) + vendor + struct.pack("<I", 0)
        # Each header packet on its own page, granule 0 (RFC 7845 section 3).
        return self._ogg.pages([(self._head, 0)]) + self._ogg.pages([(tags, 0)])

    def _frames(self, pcm: bytes | None) -> None:
        av = self._av
        if pcm is None:
            resampled = self._resampler.resample(None)
        else:
            samples = np.frombuffer(pcm, dtype="<i2").reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(samples, format="s16", layout="mono")
            frame.sample_rate = self._sample_rate
            frame.pts = self._input_samples
            self._input_samples += samples.shape[1]
            resampled = self._resampler.resample(frame)
        for out in resampled:
            self._samples_in += out.samples
            self._fifo.write(out)

    def _encode_frame(self, frame: Any, packets: list[tuple[bytes, int]]) -> None:
        frame.pts = self._samples_encoded
        frame.sample_rate = _OPUS_RATE
        self._samples_encoded += frame.samples
        self._add_packets(self._codec.encode(frame), packets)

    def _add_packets(self, encoded: Any, packets: list[tuple[bytes, int]]) -> None:
        # Granule after a packet = samples decodable through it at 48 kHz, pre-skip included (RFC 7845).
        for packet in encoded:
            self._packets += 1
            packets.append((bytes(packet), self._packets * _OPUS_FRAME))

    def encode(self, pcm: bytes) -> bytes:
        """Whole Ogg pages for every Opus packet the PCM so far completes."""
        data = self._samples(pcm)
        if not data:
            return b""
        self._frames(data)
        packets: list[tuple[bytes, int]] = []
        while self._fifo.samples >= _OPUS_FRAME:
            self._encode_frame(self._fifo.read(_OPUS_FRAME), packets)
        if not packets:
            return b""
        return self._header_pages() + self._ogg.pages(packets)

    def flush(self) -> bytes:
        """Encode what is left (padded to a whole 20 ms frame) and close the stream with an EOS page."""
        self._finish()
        self._frames(None)
        packets: list[tuple[bytes, int]] = []
        while self._fifo.samples >= _OPUS_FRAME:
            self._encode_frame(self._fifo.read(_OPUS_FRAME), packets)
        left = self._fifo.samples
        if left:
            tail = self._fifo.read(left).to_ndarray().reshape(-1)
            padded = np.zeros((1, _OPUS_FRAME), dtype="<i2")
            padded[0, : tail.shape[0]] = tail
            frame = self._av.AudioFrame.from_ndarray(padded, format="s16", layout="mono")
            self._encode_frame(frame, packets)
        self._add_packets(self._codec.encode(None), packets)
        # The last granule trims the padding: the stream decodes to exactly the samples given.
        end = min(self._pre_skip + self._samples_in, self._packets * _OPUS_FRAME)
        if packets:
            packets[-1] = (packets[-1][0], end)
        return self._header_pages() + self._ogg.pages(packets, eos=True)
