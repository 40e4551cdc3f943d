"""The SageMaker transport's pure logic (sans-I/O): ``sagemaker://`` URLs, payload parts, error codes.

Nothing here touches the network or the AWS SDK, so every rule is tested with plain values:

* :func:`parse_sagemaker_url` reads ``sagemaker://<endpoint-name>[?region=..&variant=..&endpoint_url=..]``;
* :func:`default_endpoint_uri` is the regional SageMaker runtime HTTP/2 endpoint;
* :func:`classify_payload_part` and :class:`PartAssembler` turn response ``PayloadPart`` events into Leg 1
  frames (``UTF8`` → control ``str``, ``BINARY`` → audio ``bytes``, ``PARTIAL`` parts joined);
* :func:`stream_error` maps a SageMaker-reported error to the transport error codes
  (:data:`~strands_voice_protocol.errors.TransportErrorCode`), the same codes the WebSocket transport uses.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, unquote, urlsplit

from strands_voice_protocol.errors import ConfigurationError, SageMakerStreamError, TransportErrorCode
from strands_voice_protocol.frames import is_control_frame

from strands_voice.transports._aws import unmodeled_error
from strands_voice.transports._base import Frame

__all__ = [
    "PartAssembler",
    "SageMakerTarget",
    "check_endpoint_name",
    "classify_payload_part",
    "default_endpoint_uri",
    "parse_sagemaker_url",
    "stream_error",
]

logger = logging.getLogger(__name__)

# SageMaker endpoint names: alphanumerics and hyphens, at most 63 characters.
_ENDPOINT_NAME: Final = re.compile(r"^[A-Za-z0-9](?:-*[A-Za-z0-9]){0,62}$")
_URL_OPTIONS: Final = frozenset({"region", "variant", "endpoint_url"})
# How the SDK words an error it does not model: "... - status: 400 - id: <namespace>#ValidationError".
#: SageMaker error types (and HTTP statuses) that mean "at capacity or throttled: try again later".
_BUSY_TYPES: Final = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailable",
        "ServiceUnavailableError",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalFailure",
        "InternalServerError",
        "InternalServerException",
    }
)
_BUSY_STATUSES: Final = frozenset({429, 503})
#: Stream errors that end a stream mid-answer: the connection is lost, a new stream may succeed.
_LOST_TYPES: Final = frozenset({"ModelStreamError", "InternalStreamFailure"})


@dataclass(frozen=True, slots=True)
class SageMakerTarget:
    """What a ``sagemaker://`` URL names: the endpoint and, optionally, where and which variant."""

    endpoint_name: str
    region: str | None = None
    target_variant: str | None = None
    endpoint_uri: str | None = None


def check_endpoint_name(endpoint_name: str) -> str:
    """Return ``endpoint_name`` if it is a valid SageMaker endpoint name.

    Raises:
        ConfigurationError: it is not (alphanumerics and hyphens, at most 63 characters).
    """
    if not _ENDPOINT_NAME.match(endpoint_name):
        raise ConfigurationError(f"not a SageMaker endpoint name: {endpoint_name!r}")
    return endpoint_name


def parse_sagemaker_url(url: str) -> SageMakerTarget:
    """Read ``sagemaker://<endpoint-name>[?region=..&variant=..&endpoint_url=https://host:port]``.

    Raises:
        ConfigurationError: the URL is not a valid ``sagemaker://`` URL (another scheme, a path, no
            endpoint name, an unknown option).
    """
    parts = urlsplit(url)
    if parts.scheme.lower() != "sagemaker":
        raise ConfigurationError(f"not a sagemaker:// URL: {url!r}")
    name = unquote(parts.netloc or parts.path.lstrip("/"))
    if parts.netloc and parts.path not in ("", "/"):
        raise ConfigurationError(f"a sagemaker:// URL names only the endpoint, got path {parts.path!r}")
    if not name:
        raise ConfigurationError("a sagemaker:// URL needs the endpoint name: sagemaker://<endpoint-name>")
    query = dict(parse_qsl(parts.query, keep_blank_values=False, strict_parsing=False))
    unknown = set(query) - _URL_OPTIONS
    if unknown:
        raise ConfigurationError(
            f"unknown sagemaker:// URL options {sorted(unknown)}; known: {sorted(_URL_OPTIONS)}"
        )
    return SageMakerTarget(
        endpoint_name=name,
        region=query.get("region"),
        target_variant=query.get("variant"),
        endpoint_uri=query.get("endpoint_url"),
    )


def default_endpoint_uri(region: str) -> str:
    """The regional SageMaker runtime HTTP/2 endpoint (port 8443) for ``region``."""
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://runtime.sagemaker.{region}.{suffix}:8443"


def classify_payload_part(data: bytes, data_type: str | None) -> Frame:
    """Turn one (complete) response payload into a Leg 1 frame.

    ``UTF8`` parts are control frames, ``BINARY`` parts audio, whatever their bytes look like. A part
    without a data type is a control frame only if the whole chunk decodes as UTF-8 JSON to an object.
    """
    if data_type == "UTF8" or (data_type is None and is_control_frame(data)):
        # A UTF8 part that is not valid UTF-8 still reaches the session as text: it fails to decode there.
        return data.decode("utf-8", errors="replace")
    return bytes(data)


class PartAssembler:
    """Joins ``PARTIAL`` payload parts until the part that completes them."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._data_type: str | None = None

    def feed(self, data: bytes, data_type: str | None, completion_state: str | None) -> Frame | None:
        """Add one part; returns the frame once it is complete, else None."""
        if not self._pieces:
            self._data_type = data_type
        self._pieces.append(data)
        if completion_state == "PARTIAL":
            return None
        whole = b"".join(self._pieces)
        data_type = self._data_type if self._data_type is not None else data_type
        self._pieces.clear()
        self._data_type = None
        return classify_payload_part(whole, data_type)


def stream_error(exc: BaseException, *, during: str, opening: bool) -> SageMakerStreamError:
    """A SageMaker-reported error (modeled or not) as the project's typed error, without its text.

    The code is a transport code (:data:`~strands_voice_protocol.errors.TransportErrorCode`): ``busy``
    (throttling, 429, 503: retryable), ``connection_lost`` (a stream ended mid-answer: retryable) or
    ``connection_failed`` (refused for a reason retrying does not cure: unknown endpoint, access denied,
    a container refusing the upgrade). SageMaker's own code stays on the error as ``sagemaker_code``.

    Args:
        exc: The SDK's exception (read only through its ``message``, ``error_code`` and
            ``original_status_code`` attributes and its type name).
        during: Where it happened, for the message (``opening the stream``, ``during the stream``).
        opening: True while the stream is being opened (a refusal), False once it was open (a drop).
    """
    error_type = type(exc).__name__
    remote = getattr(exc, "message", None) or str(exc)
    sagemaker_code = getattr(exc, "error_code", None)
    http_status: int | None = None
    unmodeled = unmodeled_error(exc)
    if unmodeled is not None:
        # An error the SDK does not model (AccessDeniedException, ValidationError, ...): its shape
        # name is the code.
        error_type, http_status = unmodeled
    sagemaker_code = sagemaker_code or error_type
    status = getattr(exc, "original_status_code", None)
    # SageMaker's own message can name accounts and ARNs: it is logged, and kept on the error for code
    # that wants it, but the message shown to people is ours.
    logger.warning(
        "during=<%s>, type=<%s>, code=<%s> | sagemaker error: %s", during, error_type, sagemaker_code, remote
    )
    message = f"SageMaker reported {error_type} ({sagemaker_code}) {during}"
    if status is not None:
        message += f"; the container answered HTTP {status}"
    code: TransportErrorCode
    if error_type in _BUSY_TYPES or http_status in _BUSY_STATUSES or status in _BUSY_STATUSES:
        code, retryable = "busy", True
    elif error_type in _LOST_TYPES or not opening:
        code, retryable = "connection_lost", True
    else:
        code, retryable = "connection_failed", False
    return SageMakerStreamError(
        code,
        message,
        retryable=retryable,
        error_type=error_type,
        sagemaker_code=str(sagemaker_code),
        sagemaker_message=str(remote),
    )
