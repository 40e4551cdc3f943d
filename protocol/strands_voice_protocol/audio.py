"""Audio helpers (sans-I/O): pcm16 ↔ float32, WAV, and streaming encoders that emit whole codec frames.

Every streaming encoder hands back, per :meth:`AudioEncoder.encode` call, only whole codec units, so a
consumer can decode each chunk (appended to the earlier ones) the moment it arrives:

* ``pcm16``: the bytes unchanged (raw s16le mono, 24 kHz).
* ``wav``: the first chunk starts with one 44-byte RIFF header whose RIFF and ``data`` sizes are
  ``0xFFFFFFFF`` (the usual "unknown length" value for streamed WAV: readers play until the data ends),
  then raw PCM.
* ``mp3``: whole MPEG-2 Layer III frames (lameenc, CBR; 576 samples per frame at 24 kHz).
* ``opus``: Ogg Opus. The first chunk carries the ``OpusHead`` and ``OpusTags`` pages; every chunk is
  whole Ogg pages. Opus runs at 48 kHz, so the 24 kHz input is resampled inside (PyAV). The pages are
  written here rather than by FFmpeg's Ogg muxer because that muxer always holds back the newest page
  (to mark end-of-stream on it later) and PyAV cannot flush it, which would delay every chunk's last
  20 ms.
* ``aac``: AAC-LC in ADTS (the raw stream Safari and every browser's ``decodeAudioData`` read): each
  chunk is whole ADTS frames of 1,024 samples (42.7 ms at 24 kHz), each with its own 7-byte header, so any
  prefix of whole chunks decodes. The headers are written here, not by FFmpeg's ``adts`` muxer, for the
  same reason as Ogg above. ADTS cannot say how many priming samples the encoder put first, so a decoder
  returns 1,024 samples (42.7 ms) of encoder delay before the speech, as with any ADTS stream.
* ``flac`` (not a Leg 1 format: the OpenAI-compatible route's ``response_format=flac``): the ``fLaC``
  marker and one STREAMINFO block (unknown length) in the first chunk, then whole FLAC frames.

``lameenc`` (``strands-voice[mp3]``) and ``av`` (``strands-voice[opus]`` or ``[aac]``) are optional and
imported only when an encoder or decoder that needs them is created.
"""

from __future__ import annotations

import io
import os
import struct
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from strands_voice_protocol.errors import AudioEncodingError, MissingDependencyError

__all__ = [
    "AUDIO_FORMATS",
    "BYTES_PER_SECOND",
    "CODEC_FORMATS",
    "MIME_TYPES",
    "SAMPLE_RATE",
    "STREAMING_WAV_SIZE",
    "AacEncoder",
    "AudioEncoder",
    "FlacEncoder",
    "Mp3Encoder",
    "OpusEncoder",
    "Pcm16Encoder",
    "WavEncoder",
    "adts_frame_size",
    "create_encoder",
    "decode_audio",
    "float32_to_pcm16",
    "mp3_frame_size",
    "pcm16_to_float32",
    "pcm16_to_wav",
    "wav_header",
    "write_wav",
]

from strands_voice_protocol.wire import SAMPLE_RATE

BYTES_PER_SECOND: Final = SAMPLE_RATE * 2
#: The formats of the wire protocol (Leg 1 ``format``, the Leg 3 payload's ``format``).
AUDIO_FORMATS: Final = ("pcm16", "wav", "mp3", "opus", "aac")
#: Every format :func:`create_encoder` makes: the protocol's plus ``flac`` (OpenAI-compatible route only).
CODEC_FORMATS: Final = (*AUDIO_FORMATS, "flac")
MIME_TYPES: Final[dict[str, str]] = {
    "pcm16": "audio/L16;rate=24000;channels=1",
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg;codecs=opus",
    "aac": "audio/aac",
    "flac": "audio/flac",
}
#: The RIFF and data sizes written in a streamed WAV header, whose length is not known up front.
STREAMING_WAV_SIZE: Final = 0xFFFFFFFF

_OPUS_RATE: Final = 48_000
_OPUS_FRAME: Final = 960  # 20 ms at 48 kHz
_OPUS_BITRATE: Final = 24_000
_MP3_BITRATE_KBPS: Final = 48
_AAC_BITRATE: Final = 48_000
_AAC_FRAME: Final = 1024  # samples per AAC-LC frame
#: ADTS sampling-frequency index of each rate (ISO/IEC 14496-3, 1.6.3.4).
_ADTS_RATES: Final = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350)
_ADTS_HEADER: Final = 7


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


@runtime_checkable
class AudioEncoder(Protocol):
    """A streaming encoder from pcm16 (24 kHz mono) to one of :data:`AUDIO_FORMATS`."""

    format: str
    mime_type: str

    def encode(self, pcm: bytes) -> bytes:
        """Encode more PCM; return only whole codec frames/pages (possibly ``b""``)."""
        ...

    def flush(self) -> bytes:
        """End the stream: return whatever is left (whole frames/pages). The encoder is done after this."""
        ...


class _Base:
    format: str = ""
    mime_type: str = ""

    def __init__(self) -> None:
        self._pending = b""  # an odd trailing byte: half a sample, kept for the next call
        self._done = False

    def _samples(self, pcm: bytes) -> bytes:
        if self._done:
            raise AudioEncodingError(f"the {self.format} encoder was already flushed")
        data = self._pending + bytes(pcm)
        cut = len(data) - len(data) % 2
        self._pending = data[cut:]
        return data[:cut]

    def _finish(self) -> None:
        if self._done:
            raise AudioEncodingError(f"the {self.format} encoder was already flushed")
        self._done = True


class Pcm16Encoder(_Base):
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


class WavEncoder(_Base):
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


def _missing(package: str, extra: str) -> MissingDependencyError:
    return MissingDependencyError(
        f"{package} is needed for this audio format: install strands-voice[{extra}]"
    )


class Mp3Encoder(_Base):
    """``mp3``: CBR MPEG-2 Layer III via lameenc; each chunk is whole frames.

    Args:
        sample_rate: Input rate (24 kHz: MPEG-2, 576 samples per frame).
        bitrate_kbps: Constant bitrate.
    """

    format = "mp3"
    mime_type = MIME_TYPES["mp3"]

    def __init__(self, sample_rate: int = SAMPLE_RATE, bitrate_kbps: int = _MP3_BITRATE_KBPS) -> None:
        super().__init__()
        try:
            import lameenc
        except ImportError:
            raise _missing("lameenc", "mp3") from None
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


# ---- Ogg Opus -------------------------------------------------------------------------------------


def _ogg_crc_table() -> list[int]:
    table = []
    for i in range(256):
        r = i << 24
        for _ in range(8):
            r = ((r << 1) ^ 0x04C11DB7) if r & 0x80000000 else (r << 1)
        table.append(r & 0xFFFFFFFF)
    return table


_OGG_CRC: Final = _ogg_crc_table()


def _ogg_crc(data: bytes) -> int:
    crc = 0
    table = _OGG_CRC
    for byte in data:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ table[((crc >> 24) & 0xFF) ^ byte]
    return crc


class _OggWriter:
    """Writes one logical Ogg stream, one packet list per call, as whole pages."""

    def __init__(self, serial: int) -> None:
        self._serial = serial
        self._sequence = 0
        self._first = True

    def pages(self, packets: list[tuple[bytes, int]], eos: bool = False) -> bytes:
        """Whole pages for ``(packet, granule after it)`` pairs; every page ends on a packet boundary."""
        out = []
        page: list[bytes] = []
        granule = 0
        segments = 0
        for packet, after in packets:
            lacing = len(packet) // 255 + 1
            if lacing > 255:
                raise AudioEncodingError("an Opus packet is too large for one Ogg page")
            if segments + lacing > 255:
                out.append(self._page(page, granule, False))
                page, segments = [], 0
            page.append(packet)
            granule = after
            segments += lacing
        if page or eos:
            out.append(self._page(page, granule, eos))
        return b"".join(out)

    def _page(self, packets: list[bytes], granule: int, eos: bool) -> bytes:
        lacing = bytearray()
        for packet in packets:
            lacing += b"\xff" * (len(packet) // 255) + bytes([len(packet) % 255])
        flags = (0x02 if self._first else 0) | (0x04 if eos else 0)
        self._first = False
        header = struct.pack(
            "<4sBBqIIIB", b"OggS", 0, flags, granule, self._serial, self._sequence, 0, len(lacing)
        )
        self._sequence += 1
        page = bytearray(header + lacing + b"".join(packets))
        struct.pack_into("<I", page, 22, _ogg_crc(bytes(page)))
        return bytes(page)


class OpusEncoder(_Base):
    """``opus``: Ogg Opus at 48 kHz (resampled inside), one page flush per call so latency stays low.

    The first non-empty chunk starts with the ``OpusHead`` and ``OpusTags`` pages; every chunk is whole
    Ogg pages, so the concatenation of the chunks so far always decodes.

    Args:
        sample_rate: Input rate (resampled to 48 kHz).
        bitrate: Opus bitrate in bits per second (24 kbps VOIP mode suits speech).
        application: libopus application: ``voip``, ``audio`` or ``lowdelay``.
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
            raise _missing("av (PyAV)", "opus") from None
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
        self._ogg = _OggWriter(serial=int.from_bytes(os.urandom(4), "little"))
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


# ---- AAC (ADTS) and FLAC through PyAV --------------------------------------------------------------


class _AvFramedEncoder(_Base):
    """Feeds PyAV's encoder ``codec`` whole frames of its ``frame_size`` from a FIFO; the subclass frames
    each packet for its container (:meth:`_wrap`)."""

    _codec_name: str = ""
    _sample_format: str = "s16"
    _extra: str = ""

    def __init__(self, sample_rate: int, bitrate: int | None = None) -> None:
        super().__init__()
        try:
            import av
        except ImportError:
            raise _missing("av (PyAV)", self._extra) from None
        self._av: Any = av
        self._sample_rate = sample_rate
        codec: Any = av.CodecContext.create(self._codec_name, "w")
        codec.sample_rate = sample_rate
        codec.layout = "mono"
        codec.format = self._sample_format
        if bitrate is not None:
            codec.bit_rate = bitrate
        codec.open()
        self._codec = codec
        self._frame_size = int(codec.frame_size) or _AAC_FRAME
        self._fifo: Any = av.AudioFifo()
        self._samples_fed = 0

    def _frame(self, samples: npt.NDArray[Any]) -> Any:
        frame = self._av.AudioFrame.from_ndarray(samples, format=self._sample_format, layout="mono")
        frame.sample_rate = self._sample_rate
        return frame

    def _input(self, pcm: bytes) -> Any:
        samples = np.frombuffer(pcm, dtype="<i2").reshape(1, -1)
        if self._sample_format == "fltp":
            return self._frame(samples.astype(np.float32) / np.float32(32768.0))
        return self._frame(samples)

    def _encode_fifo(self, final: bool) -> bytes:
        packets: list[bytes] = []
        while self._fifo.samples >= self._frame_size or (final and self._fifo.samples):
            frame = self._fifo.read(min(self._frame_size, self._fifo.samples))
            frame.pts = self._samples_fed
            self._samples_fed += frame.samples
            packets.extend(bytes(packet) for packet in self._codec.encode(frame))
        if final:
            packets.extend(bytes(packet) for packet in self._codec.encode(None))
        return b"".join(self._wrap(packet) for packet in packets)

    def _wrap(self, packet: bytes) -> bytes:
        raise NotImplementedError

    def _header(self) -> bytes:
        return b""

    def encode(self, pcm: bytes) -> bytes:
        """Whole container frames for every codec frame the PCM so far completes."""
        data = self._samples(pcm)
        if not data:
            return b""
        self._fifo.write(self._input(data))
        out = self._encode_fifo(final=False)
        return self._header() + out if out else b""

    def flush(self) -> bytes:
        """Encode what is left (the last frame short) and drain the encoder."""
        self._finish()
        return self._header() + self._encode_fifo(final=True)


class AacEncoder(_AvFramedEncoder):
    """``aac``: AAC-LC in ADTS (FFmpeg's native encoder through PyAV); each chunk is whole ADTS frames.

    Args:
        sample_rate: Input rate (24 kHz; must be one of the ADTS rates).
        bitrate: Target bitrate in bits per second.
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


class FlacEncoder(_AvFramedEncoder):
    """``flac``: a FLAC stream (``fLaC``, STREAMINFO with unknown length, then whole frames).

    Args:
        sample_rate: Input rate.
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


def create_encoder(format: str, sample_rate: int = SAMPLE_RATE) -> AudioEncoder:
    """A new streaming encoder for ``format`` (one of :data:`CODEC_FORMATS`).

    Raises:
        AudioEncodingError: unknown format.
        MissingDependencyError: the format's optional dependency is not installed.
    """
    if format == "pcm16":
        return Pcm16Encoder()
    if format == "wav":
        return WavEncoder(sample_rate)
    if format == "mp3":
        return Mp3Encoder(sample_rate)
    if format == "opus":
        return OpusEncoder(sample_rate)
    if format == "aac":
        return AacEncoder(sample_rate)
    if format == "flac":
        return FlacEncoder(sample_rate)
    raise AudioEncodingError(f"unknown audio format {format!r}; expected one of {', '.join(CODEC_FORMATS)}")


def decode_audio(data: bytes, format: str) -> bytes:
    """Decode a whole (or whole-chunk prefix of a) stream back to pcm16 mono at 24 kHz.

    Raises:
        AudioEncodingError: the data cannot be decoded, or the format is unknown.
        MissingDependencyError: compressed formats need PyAV (``strands-voice[opus]`` or ``[aac]``).
    """
    if format == "pcm16":
        return bytes(data[: len(data) - len(data) % 2])
    if format == "wav":
        return _decode_wav(data)
    if format not in ("mp3", "opus", "aac", "flac"):
        raise AudioEncodingError(f"unknown audio format {format!r}")
    try:
        import av
    except ImportError:
        raise _missing("av (PyAV)", "opus") from None
    resampler: Any = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    out = bytearray()

    def add(frames: Any) -> None:
        for frame in frames:
            for converted in resampler.resample(frame):
                out.extend(converted.to_ndarray().astype("<i2").tobytes())

    try:
        if format in ("mp3", "aac"):
            # The codec's own parser, not the demuxer: it decodes even a single frame.
            codec: Any = av.CodecContext.create(format, "r")
            for packet in [*codec.parse(bytes(data)), *codec.parse(None)]:
                add(codec.decode(packet))
            add(codec.decode(None))
        else:
            container: Any = av.open(io.BytesIO(data), format="ogg" if format == "opus" else "flac")
            with container:
                add(container.decode(audio=0))
        add([None])
    except av.FFmpegError:
        raise AudioEncodingError(f"the data is not decodable {format}") from None
    return bytes(out)


def _decode_wav(data: bytes) -> bytes:
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
                return _resample_linear(pcm, fmt[2])
            return pcm
        pos = body + size + (size & 1)
    raise AudioEncodingError("the WAV stream has no data chunk")


def _resample_linear(pcm: bytes, rate: int) -> bytes:
    samples = pcm16_to_float32(pcm)
    if not len(samples):
        return b""
    count = round(len(samples) * SAMPLE_RATE / rate)
    positions = np.linspace(0, len(samples) - 1, count)
    return float32_to_pcm16(np.interp(positions, np.arange(len(samples)), samples))
