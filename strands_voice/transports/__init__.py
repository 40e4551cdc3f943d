"""The connections a TTS session runs over: whole Leg 1 frames, nothing more.

- :class:`FrameTransport` is what a session needs from a connection (``_base``);
- :class:`WebSocketTransport`: a plain WebSocket (a local container or any host);
- :class:`~strands_voice.transports.sagemaker.SageMakerTransport`: SageMaker's HTTP/2 bidirectional
  stream (the ``sagemaker`` extra);
- :func:`transport_from_url` reads a ``ws://``, ``wss://`` (``http(s)://``) or ``sagemaker://`` URL into
  one; :func:`normalize_tts_url` is that one reading of a URL.

``_aws`` holds the AWS region, credentials and the lazy import of a smithy HTTP/2 SDK, which the
SageMaker transport and the Transcribe recognizer (:mod:`strands_voice.listen`) share: exported here
(:func:`chain_region`, :func:`chain_credentials`, :func:`load_smithy_sdk`, :func:`unmodeled_error`) for it.
"""

from __future__ import annotations

from strands_voice.transports._aws import (
    BotocoreCredentials,
    SmithySDK,
    chain_credentials,
    chain_region,
    load_smithy_sdk,
    unmodeled_error,
)
from strands_voice.transports._base import CONNECT_TIMEOUT_S, Frame, FrameTransport
from strands_voice.transports._url import normalize_tts_url, transport_from_url
from strands_voice.transports._websocket import WebSocketTransport
from strands_voice.transports.sagemaker import SageMakerTransport

__all__ = [
    "CONNECT_TIMEOUT_S",
    "BotocoreCredentials",
    "Frame",
    "FrameTransport",
    "SageMakerTransport",
    "SmithySDK",
    "WebSocketTransport",
    "chain_credentials",
    "chain_region",
    "load_smithy_sdk",
    "normalize_tts_url",
    "transport_from_url",
    "unmodeled_error",
]
