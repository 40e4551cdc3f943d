"""Pick the transport for a TTS endpoint URL: ``ws://``/``wss://`` or ``sagemaker://``.

:func:`normalize_tts_url` is the one reading of such a URL (the example app checks its configuration
with it); :func:`transport_from_url` makes the transport for it.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.wire import BIDI_PATH

from strands_voice.transports._base import CONNECT_TIMEOUT_S, FrameTransport
from strands_voice.transports._websocket import WebSocketTransport
from strands_voice.transports.sagemaker import SageMakerTransport

__all__ = ["normalize_tts_url", "transport_from_url"]

_WEBSOCKET = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


def normalize_tts_url(url: str) -> str:
    """The TTS endpoint URL a transport is made for.

    ``http(s)://`` becomes ``ws(s)://``, and a WebSocket URL with no path (``ws://host:port``) gets
    :data:`~strands_voice_protocol.wire.BIDI_PATH`; a ``sagemaker://`` URL is kept as given (its
    transport reads it).

    Raises:
        ConfigurationError: The scheme is not ``ws``, ``wss``, ``http``, ``https`` or ``sagemaker``, or
            the host (the endpoint's name) is missing.
    """
    url = url.strip()
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if (scheme not in _WEBSOCKET and scheme != "sagemaker") or not parts.netloc:
        raise ConfigurationError(
            f"bad TTS endpoint URL {url!r}: use ws://host:port, wss://host/path or sagemaker://<endpoint-name>"
        )
    if scheme == "sagemaker":
        return url
    path = parts.path if parts.path not in {"", "/"} else BIDI_PATH
    return urlunsplit((_WEBSOCKET[scheme], parts.netloc, path, parts.query, parts.fragment))


def transport_from_url(url: str, *, connect_timeout: float = CONNECT_TIMEOUT_S) -> FrameTransport:
    """Create (not connect) the transport for ``url`` (read by :func:`normalize_tts_url`).

    Args:
        url: ``ws://host:port/invocations-bidirectional-stream`` (or ``wss://``, or ``http(s)://``);
            ``sagemaker://<endpoint>?region=..&variant=..`` uses the SageMaker transport (its AWS SDK is
            the ``sagemaker`` extra, imported when the transport connects).
        connect_timeout: Seconds connecting may take.

    Raises:
        ConfigurationError: the scheme is not supported, or a ``sagemaker://`` URL is malformed.
    """
    url = normalize_tts_url(url)
    if url.lower().startswith("sagemaker:"):
        return SageMakerTransport.from_url(url, connect_timeout=connect_timeout)
    return WebSocketTransport(url, connect_timeout=connect_timeout)
