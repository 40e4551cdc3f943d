"""The shared engine of the PyAV-encoded formats that frame each codec packet themselves (AAC in ADTS,
FLAC): a FIFO that feeds the codec whole frames of its ``frame_size``, and a per-format :meth:`_wrap`.

``av`` is imported only when an encoder is created.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

from strands_voice_protocol.audio.encoder import StreamEncoderBase, missing_extra

__all__ = ["AvFramedEncoder"]

_DEFAULT_FRAME: Final = 1024  # samples per frame when the codec does not say (AAC-LC's frame)


class AvFramedEncoder(StreamEncoderBase):
    """Feeds PyAV's encoder ``codec`` whole frames of its ``frame_size`` from a FIFO; the subclass frames
    each packet for its container (:meth:`_wrap`) and may put a stream header first (:meth:`_header`).

    Args:
        sample_rate: Input (and codec) rate.
        bitrate: Target bitrate in bits per second, or None for the codec's default (lossless codecs).

    Raises:
        MissingDependencyError: PyAV is not installed.
    """

    _codec_name: str = ""
    _sample_format: str = "s16"
    _extra: str = ""

    def __init__(self, sample_rate: int, bitrate: int | None = None) -> None:
        super().__init__()
        try:
            import av
        except ImportError:
            raise missing_extra("av (PyAV)", self._extra) from None
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
        self._frame_size = int(codec.frame_size) or _DEFAULT_FRAME
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
