"""What a streaming encoder is: the format names, their media types, the :class:`AudioEncoder` protocol
and the bookkeeping every encoder shares (half samples held back, no use after :meth:`flush`)."""

from __future__ import annotations

from typing import Final, Protocol, runtime_checkable

from strands_voice_protocol.errors import AudioEncodingError, MissingDependencyError
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = [
    "AUDIO_FORMATS",
    "CODEC_FORMATS",
    "G711_RATE",
    "MIME_TYPES",
    "TELEPHONY_FORMATS",
    "AudioEncoder",
    "StreamEncoderBase",
    "format_sample_rate",
    "missing_extra",
]

#: The formats of the wire protocol (Leg 1 ``format``, the Leg 3 payload's ``format``).
AUDIO_FORMATS: Final = ("pcm16", "wav", "mp3", "opus", "aac", "mulaw", "alaw")
#: The phone-line formats (G.711 at :data:`G711_RATE`, one byte a sample): every other format is at
#: :data:`~strands_voice_protocol.wire.SAMPLE_RATE`.
TELEPHONY_FORMATS: Final = ("mulaw", "alaw")
#: The sample rate of G.711 on phone lines.
G711_RATE: Final = 8_000
#: Every format :func:`~strands_voice_protocol.audio.create_encoder` makes: the protocol's plus ``flac``
#: (OpenAI-compatible route only).
CODEC_FORMATS: Final = (*AUDIO_FORMATS, "flac")
MIME_TYPES: Final[dict[str, str]] = {
    "pcm16": f"audio/L16;rate={SAMPLE_RATE};channels=1",
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg;codecs=opus",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "mulaw": f"audio/PCMU;rate={G711_RATE}",
    "alaw": f"audio/PCMA;rate={G711_RATE}",
}


def format_sample_rate(format: str) -> int:
    """The sample rate a format's stream carries (``audio_start.sample_rate``): G.711's or the wire's."""
    return G711_RATE if format in TELEPHONY_FORMATS else SAMPLE_RATE


@runtime_checkable
class AudioEncoder(Protocol):
    """A streaming encoder from pcm16 (24 kHz mono) to one of :data:`CODEC_FORMATS` (G.711 at 8 kHz)."""

    format: str
    mime_type: str

    def encode(self, pcm: bytes) -> bytes:
        """Encode more PCM; return only whole codec frames/pages (possibly ``b""``)."""
        ...

    def flush(self) -> bytes:
        """End the stream: return whatever is left (whole frames/pages). The encoder is done after this."""
        ...


class StreamEncoderBase:
    """Shared state of the encoders: an odd trailing byte kept for the next call, and the flushed flag."""

    format: str = ""
    mime_type: str = ""

    def __init__(self) -> None:
        self._pending = b""  # an odd trailing byte: half a sample, kept for the next call
        self._done = False

    def _samples(self, pcm: bytes) -> bytes:
        """The whole samples of the held byte plus ``pcm``; raises once flushed."""
        if self._done:
            raise AudioEncodingError(f"the {self.format} encoder was already flushed")
        data = self._pending + bytes(pcm)
        cut = len(data) - len(data) % 2
        self._pending = data[cut:]
        return data[:cut]

    def _finish(self) -> None:
        """Mark the encoder flushed; raises if it already was."""
        if self._done:
            raise AudioEncodingError(f"the {self.format} encoder was already flushed")
        self._done = True


def missing_extra(package: str, extra: str) -> MissingDependencyError:
    """The error for a format whose optional dependency ``package`` (extra ``extra``) is not installed."""
    return MissingDependencyError(
        f"{package} is needed for this audio format: install strands-voice[{extra}]"
    )
