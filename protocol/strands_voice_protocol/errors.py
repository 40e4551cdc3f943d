"""The one exception hierarchy of strands-voice: all it raises on purpose derives from StrandsVoiceError."""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "AGENT_ERROR_CODES",
    "FRAME_ERROR_CODES",
    "TRANSPORT_ERROR_CODES",
    "AgentErrorCode",
    "AudioEncodingError",
    "ConfigurationError",
    "FrameDecodeError",
    "FrameErrorCode",
    "MissingDependencyError",
    "RecognitionError",
    "RecognitionErrorCode",
    "SSEDecodeError",
    "SageMakerStreamError",
    "StrandsVoiceError",
    "TTSConnectionError",
    "TTSError",
    "TTSRequestError",
    "TTSTimeoutError",
    "TextEncodingError",
    "TransportErrorCode",
]


#: The codes of a Leg 1 ``error`` frame (PROTOCOL.md, Leg 1): what the endpoint answers a request with.
FrameErrorCode = Literal[
    "invalid_json",
    "invalid_request",
    "text_too_long",
    "unknown_voice",
    "unsupported_language",
    "busy",
    "internal",
]
#: Every :data:`FrameErrorCode`.
FRAME_ERROR_CODES: Final[frozenset[str]] = frozenset(get_args(FrameErrorCode))

#: Why a TTS connection failed, the same code whatever the transport (WebSocket or SageMaker): the
#: ``code`` of every :class:`TTSConnectionError` and :class:`TTSTimeoutError` a transport or the session
#: raises, and the Leg 3 ``error`` code the agent side reports for it (PROTOCOL.md, Leg 3).
TransportErrorCode = Literal[
    "connection_failed",  # the endpoint could not be reached, or refused the session for good
    "connect_timeout",  # no answer to the connection attempt in time
    "connection_lost",  # the connection dropped mid-answer and could not be resumed
    "silence_timeout",  # the endpoint stayed silent while audio was owed
    "busy",  # the endpoint is at capacity or throttling (retried first; this is the give-up)
]
#: Every :data:`TransportErrorCode`, in the order above.
TRANSPORT_ERROR_CODES: Final[tuple[TransportErrorCode, ...]] = get_args(TransportErrorCode)

#: The agent side's own error codes (PROTOCOL.md, Leg 3), the same whatever the transport: the transport
#: codes and three of the app's. Leg 1 codes (``text_too_long``, ``unknown_voice``, ``internal``, ...)
#: pass through beside them.
AgentErrorCode = Literal[TransportErrorCode, "agent_error", "invalid_request", "invalid_json"]
AGENT_ERROR_CODES: Final[frozenset[str]] = frozenset(get_args(AgentErrorCode))

#: Why a streaming speech recognizer (Amazon Transcribe) failed: the transport codes for reaching the
#: service, ``invalid_request`` when it refused the request's settings, ``internal`` when it failed itself.
RecognitionErrorCode = Literal[TransportErrorCode, "invalid_request", "internal"]


class StrandsVoiceError(Exception):
    """Root of every error strands-voice raises on purpose."""


class ConfigurationError(StrandsVoiceError, ValueError):
    """A setting is invalid (an option out of range, an unknown mode, an unsupported endpoint URL, ...).

    Raised where the setting is given (a constructor, a URL parser), before anything runs. It is a
    ``ValueError`` too, so code that caught ``ValueError`` for bad settings still does.
    """


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
        retryable: True when trying again later may succeed (a dropped connection, ``busy``, 1013,
            HTTP 429/503, SageMaker throttling); never for an invalid request.
    """

    def __init__(
        self, code: str, message: str, request_id: str | None = None, *, retryable: bool = False
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id
        self.retryable = retryable


class TTSRequestError(TTSError):
    """The endpoint answered one request with an `error` frame; the session stays usable."""


class _TransportFailure(TTSError):
    """A transport failure: its ``code`` is a :data:`TransportErrorCode` (checked by mypy)."""

    code: TransportErrorCode

    def __init__(
        self,
        code: TransportErrorCode,
        message: str,
        request_id: str | None = None,
        *,
        retryable: bool = False,
    ) -> None:
        super().__init__(code, message, request_id, retryable=retryable)


class TTSConnectionError(_TransportFailure):
    """The TTS session could not be opened, or the connection dropped.

    Attributes:
        code: One of :data:`TRANSPORT_ERROR_CODES`, the same for the same failure on every transport.
    """


class SageMakerStreamError(TTSConnectionError):
    """SageMaker refused or ended the bidirectional stream (``ModelStreamError``, ``InternalStreamFailure``).

    Attributes:
        code: The transport code (:data:`TransportErrorCode`): ``busy`` for throttling and 429/503,
            ``connection_lost`` for a stream ended mid-answer, ``connection_failed`` for a refusal.
        error_type: The SageMaker error type, e.g. ``ModelStreamError``.
        sagemaker_code: SageMaker's own error code (its ``ErrorCode``, else the error type).
        sagemaker_message: SageMaker's own message (may name accounts or ARNs: log it, don't show it).
    """

    def __init__(
        self,
        code: TransportErrorCode,
        message: str,
        *,
        error_type: str = "",
        sagemaker_code: str = "",
        sagemaker_message: str = "",
        retryable: bool = False,
        request_id: str | None = None,
    ) -> None:
        super().__init__(code, message, request_id, retryable=retryable)
        self.error_type = error_type
        self.sagemaker_code = sagemaker_code
        self.sagemaker_message = sagemaker_message


class TTSTimeoutError(_TransportFailure):
    """Connecting took too long, or the endpoint went silent while audio was owed.

    Attributes:
        code: ``connect_timeout`` or ``silence_timeout`` (a :data:`TransportErrorCode`).
    """


class RecognitionError(StrandsVoiceError):
    """A streaming speech recognition service refused or ended a turn's stream.

    Attributes:
        code: A :data:`RecognitionErrorCode`: ``busy`` (retryable) for throttling and limits,
            ``invalid_request`` for settings the service refused, ``connection_failed`` when it could not
            be reached or refused the caller, ``connect_timeout``, ``connection_lost`` for a stream ended
            early, ``internal`` for the service's own failure.
        message: What happened, for a person.
        service_code: The service's own error name (e.g. ``BadRequestException``), when it gave one.
        retryable: True when a later turn may succeed.
    """

    def __init__(
        self, code: RecognitionErrorCode, message: str, *, service_code: str = "", retryable: bool = False
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code: RecognitionErrorCode = code
        self.message = message
        self.service_code = service_code
        self.retryable = retryable
