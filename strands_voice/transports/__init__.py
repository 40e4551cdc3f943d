"""The connections a TTS session runs over: whole Leg 1 frames, nothing more.

- :class:`FrameTransport` is what a session needs from a connection (``_base``);
- :class:`WebSocketTransport`: a plain WebSocket (a local container or any host);
- :class:`~strands_voice.transports.sagemaker.SageMakerTransport`: SageMaker's HTTP/2 bidirectional
  stream (the ``sagemaker`` extra);
- :func:`transport_from_url` reads a ``ws://``, ``wss://`` (``http(s)://``) or ``sagemaker://`` URL into
  one; :func:`normalize_tts_url` is that one reading of a URL.

``_aws`` holds the AWS region, credentials and the lazy import of a smithy HTTP/2 SDK, which the
SageMaker transport and the Transcribe recognizer share.
"""

from __future__ import annotations

from strands_voice.transports._base import CONNECT_TIMEOUT_S, Frame, FrameTransport
from strands_voice.transports._url import normalize_tts_url, transport_from_url
from strands_voice.transports._websocket import WebSocketTransport
from strands_voice.transports.sagemaker import SageMakerTransport

__all__ = [
    "CONNECT_TIMEOUT_S",
    "Frame",
    "FrameTransport",
    "SageMakerTransport",
    "WebSocketTransport",
    "normalize_tts_url",
    "transport_from_url",
]
