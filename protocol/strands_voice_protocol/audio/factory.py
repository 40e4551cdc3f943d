"""One entry point for the encoders: :func:`create_encoder` picks the encoder of a format name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from strands_voice_protocol.audio.aac import AacEncoder
from strands_voice_protocol.audio.encoder import CODEC_FORMATS, AudioEncoder
from strands_voice_protocol.audio.flac import FlacEncoder
from strands_voice_protocol.audio.g711 import AlawEncoder, MulawEncoder
from strands_voice_protocol.audio.mp3 import Mp3Encoder
from strands_voice_protocol.audio.opus import OpusEncoder
from strands_voice_protocol.audio.pcm import SAMPLE_RATE, Pcm16Encoder
from strands_voice_protocol.audio.wav import WavEncoder
from strands_voice_protocol.errors import AudioEncodingError

__all__ = ["create_encoder"]

_BY_FORMAT: Final[dict[str, Callable[[int], AudioEncoder]]] = {
    "wav": WavEncoder,
    "mp3": Mp3Encoder,
    "opus": OpusEncoder,
    "aac": AacEncoder,
    "flac": FlacEncoder,
    "mulaw": MulawEncoder,
    "alaw": AlawEncoder,
}


def create_encoder(format: str, sample_rate: int = SAMPLE_RATE) -> AudioEncoder:
    """A new streaming encoder for ``format`` (one of :data:`~.encoder.CODEC_FORMATS`).

    Raises:
        AudioEncodingError: unknown format.
        MissingDependencyError: the format's optional dependency is not installed.
    """
    if format == "pcm16":
        return Pcm16Encoder()  # bytes unchanged: no rate to keep
    encoder = _BY_FORMAT.get(format)
    if encoder is not None:
        return encoder(sample_rate)
    raise AudioEncodingError(f"unknown audio format {format!r}; expected one of {', '.join(CODEC_FORMATS)}")
