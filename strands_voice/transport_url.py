"""Pick the transport for a TTS endpoint URL: ``ws://``/``wss://`` or ``sagemaker://``."""

from __future__ import annotations

import importlib
from urllib.parse import urlsplit, urlunsplit

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.wire import BIDI_PATH

from strands_voice.transport import FrameTransport

__all__ = ["transport_from_url"]


def transport_from_url(url: str, *, connect_timeout: float = 10.0) -> FrameTransport:
    """Create (not connect) the transport for ``url``.

    Args:
        url: ``ws://host:port/invocations-bidirectional-stream`` (or ``wss://``); a URL with no path
            (``ws://host:port``, ``http://host:port``) gets
            :data:`~strands_voice_protocol.wire.BIDI_PATH`, and ``http(s)://`` becomes ``ws(s)://``;
            ``sagemaker://<endpoint>?region=..&variant=..`` uses the SageMaker transport (needs the
            ``sagemaker`` extra).
        connect_timeout: Seconds connecting may take.

    Raises:
        ConfigurationError: the scheme is not supported, or a ``sagemaker://`` URL is malformed.
        MissingDependencyError: ``sagemaker://`` without the ``sagemaker`` extra installed.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in {"http", "https", "ws", "wss"}:
        scheme = {"http": "ws", "https": "wss"}.get(scheme, scheme)
        path = parts.path if parts.path not in {"", "/"} else BIDI_PATH
        url = urlunsplit((scheme, parts.netloc, path, parts.query, parts.fragment))
    if scheme in {"ws", "wss"}:
        from strands_voice.websocket import WebSocketTransport

        return WebSocketTransport(url, connect_timeout=connect_timeout)
    if scheme == "sagemaker":
        # Lazy: the SageMaker transport pulls in the optional AWS SDK.
        sagemaker = importlib.import_module("strands_voice.sagemaker")
        transport: FrameTransport = sagemaker.SageMakerTransport.from_url(
            url, connect_timeout=connect_timeout
        )
        return transport
    raise ConfigurationError(
        f"unsupported TTS endpoint URL scheme {parts.scheme!r}; use ws://, wss:// or sagemaker://"
    )
