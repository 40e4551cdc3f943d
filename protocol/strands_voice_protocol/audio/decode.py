"""Reading the formats back: :func:`decode_audio` turns a whole stream, or any prefix of whole chunks, into
pcm16 at 24 kHz (tests, the demo and the bench check what was sent with it)."""

from __future__ import annotations

import io
from typing import Any

from strands_voice_protocol.audio.encoder import missing_extra
from strands_voice_protocol.audio.g711 import G711_RATE
from strands_voice_protocol.audio.pcm import SAMPLE_RATE
from strands_voice_protocol.audio.wav import wav_to_pcm16
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["decode_audio"]


def decode_audio(data: bytes, format: str) -> bytes:
    """Decode a whole (or whole-chunk prefix of a) stream back to pcm16 mono at 24 kHz.

    Raises:
        AudioEncodingError: the data cannot be decoded, or the format is unknown.
        MissingDependencyError: compressed and G.711 formats need PyAV (``strands-voice[opus]`` or
            ``[aac]``).
    """
    if format == "pcm16":
        return bytes(data[: len(data) - len(data) % 2])
    if format == "wav":
        return wav_to_pcm16(data)
    if format not in ("mp3", "opus", "aac", "flac", "mulaw", "alaw"):
        raise AudioEncodingError(f"unknown audio format {format!r}")
    try:
        import av
    except ImportError:
        raise missing_extra("av (PyAV)", "opus") from None
    resampler: Any = av.AudioResampler(format="s16", layout="mono", rate=SAMPLE_RATE)
    out = bytearray()

    def add(frames: Any) -> None:
        for frame in frames:
            for converted in resampler.resample(frame):
                out.extend(converted.to_ndarray().astype("<i2").tobytes())

    codec: Any
    try:
        if format in ("mulaw", "alaw"):
            # FFmpeg's own G.711 decoder (not ours: a check of what the encoder wrote), 8 kHz in.
            codec = av.CodecContext.create(f"pcm_{format}", "r")
            codec.sample_rate = G711_RATE
            codec.layout = "mono"
            add(codec.decode(av.Packet(bytes(data))) if data else [])
        elif format in ("mp3", "aac"):
            # The codec's own parser, not the demuxer: it decodes even a single frame.
            codec = av.CodecContext.create(format, "r")
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
