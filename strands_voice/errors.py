"""The one exception hierarchy of strands-voice: all it raises on purpose derives from StrandsVoiceError."""

from __future__ import annotations

__all__ = [
    "AudioEncodingError",
    "FrameDecodeError",
    "MissingDependencyError",
    "SSEDecodeError",
    "SageMakerStreamError",
    "StrandsVoiceError",
    "TTSConnectionError",
    "TTSError",
    "TTSRequestError",
    "TTSTimeoutError",
    "TextEncodingError",
]


class StrandsVoiceError(Exception):
    """Root of every error strands-voice raises on purpose."""


class FrameDecodeError(StrandsVoiceError):
    """A Leg 1 frame could not be decoded into a valid message.

    Attributes:
        code: The PROTOCOL.md error code that answers it (`invalid_json` or `invalid_request`).
        message: A message written for a person; never exception text.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class AudioEncodingError(StrandsVoiceError):
    """Audio could not be encoded or decoded in the requested format."""


class TextEncodingError(StrandsVoiceError, ValueError):
    """Text to be sent holds a character UTF-8 cannot carry (a lone surrogate such as ``"\\ud800"``).

    Attributes:
        field: Which field held it (``text``, ``id``, ``event.text``, ...).
    """

    def __init__(self, field: str) -> None:
        super().__init__(
            f"{field!r} is not valid Unicode text: it holds a lone surrogate, which UTF-8 cannot carry."
        )
        self.field = field


class SSEDecodeError(StrandsVoiceError):
    """A Server-Sent Events stream broke a limit (an event or line larger than the decoder allows)."""


class MissingDependencyError(StrandsVoiceError, ImportError):
    """An optional dependency is not installed; the message says what to install."""


class TTSError(StrandsVoiceError):
    """Speech synthesis failed.

    Attributes:
        code: A PROTOCOL.md error code (`internal`, `busy`, ...) or a transport code.
        message: What happened, for a person.
        request_id: The request it concerns, when known.
    """

    def __init__(self, code: str, message: str, request_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id


class TTSRequestError(TTSError):
    """The endpoint answered one request with an `error` frame; the session stays usable."""


class TTSConnectionError(TTSError):
    """The TTS session could not be opened, or the connection dropped."""


class SageMakerStreamError(TTSConnectionError):
    """SageMaker refused or ended the bidirectional stream (``ModelStreamError``, ``InternalStreamFailure``).

    Attributes:
        code: SageMaker's error code (its ``ErrorCode``, else the error type).
        error_type: The SageMaker error type, e.g. ``ModelStreamError``.
        sagemaker_message: SageMaker's own message (may name accounts or ARNs: log it, don't show it).
    """

    def __init__(
        self,
        code: str,
        message: str,
        request_id: str | None = None,
        *,
        error_type: str = "",
        sagemaker_message: str = "",
    ) -> None:
        super().__init__(code, message, request_id)
        self.error_type = error_type
        self.sagemaker_message = sagemaker_message


class TTSTimeoutError(TTSError):
    """Connecting took too long, or the endpoint went silent while audio was owed."""
