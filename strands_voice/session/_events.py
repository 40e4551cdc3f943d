"""What a TTS session gives its consumer: one typed event per thing that happened to a request."""

from __future__ import annotations

from dataclasses import dataclass

from strands_voice_protocol.frames import WordTiming

__all__ = [
    "AudioChunk",
    "RequestCancelled",
    "RequestCompleted",
    "RequestFailed",
    "RequestRestarted",
    "RequestStarted",
    "SessionEvent",
    "WordsReceived",
]


@dataclass(frozen=True, slots=True)
class RequestStarted:
    """The endpoint began answering a request (its ``synthesis_start``)."""

    request_id: str
    format: str
    sample_rate: int
    channels: int


@dataclass(frozen=True, slots=True)
class AudioChunk:
    """A piece of a request's audio (pcm16 from the endpoint), in order."""

    request_id: str
    data: bytes


@dataclass(frozen=True, slots=True)
class RequestCompleted:
    """All audio of a request has arrived (its ``synthesis_complete``).

    For a request resumed at a sample, ``audio_bytes`` and ``duration_s`` count every byte given for it,
    on every connection (the endpoint's own figures count only what its last answer sent).
    """

    request_id: str
    audio_bytes: int
    duration_s: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class RequestCancelled:
    """A cancelled request ended; no more audio for it follows."""

    request_id: str


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """The endpoint answered a request with an ``error`` frame; the session stays usable.

    ``request_id`` is None when the endpoint's error named no request.
    """

    request_id: str | None
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class WordsReceived:
    """The words of a request's next audio (its ``word_timestamps``, sent when ``timestamps=True``)."""

    request_id: str
    words: tuple[WordTiming, ...]


@dataclass(frozen=True, slots=True)
class RequestRestarted:
    """The connection dropped while a request was answered, and the endpoint could not resume it at a
    sample (it does not know ``skip_samples``): it is replayed from its start.

    The ``dropped_bytes`` of audio already given for the request are void: a player drops (or fades out)
    what it still holds of them. The request's events follow again from :class:`RequestStarted`.
    """

    request_id: str
    dropped_bytes: int


SessionEvent = (
    RequestStarted
    | AudioChunk
    | RequestCompleted
    | RequestCancelled
    | RequestFailed
    | RequestRestarted
    | WordsReceived
)
