"""The frame transport interface: what a TTS session needs from a connection to a Leg 1 endpoint.

A transport moves whole Leg 1 frames and nothing more. It knows no request ids, no ordering and no
timeouts; the session (``strands_voice.session``) adds those on top, the same way for every transport.
"""

from __future__ import annotations

from typing import Final, Protocol, runtime_checkable

__all__ = ["CONNECT_TIMEOUT_S", "Frame", "FrameTransport"]

#: Seconds opening one connection to the TTS endpoint may take (the handler, the session, the transports).
CONNECT_TIMEOUT_S: Final = 10.0

#: One frame from the endpoint: ``str`` for a control (JSON text) frame, ``bytes`` for audio.
Frame = str | bytes


@runtime_checkable
class FrameTransport(Protocol):
    """A duplex, ordered pipe of Leg 1 frames to one endpoint session.

    Implementations: ``strands_voice.transports.WebSocketTransport`` (plain WebSocket, local container or
    any host) and ``SageMakerTransport`` (SageMaker's HTTP/2 bidirectional stream).
    """

    async def connect(self) -> None:
        """Open the connection.

        Raises:
            TTSConnectionError: the endpoint could not be reached or refused the session.
        """
        ...

    async def send(self, message: str) -> None:
        """Send one client message (a JSON object as text) as one frame.

        Raises:
            TTSConnectionError: the connection is closed or dropped.
        """
        ...

    async def receive(self) -> Frame:
        """Wait for the next frame from the endpoint.

        Control frames come back as ``str``, audio as ``bytes``. Where the transport keeps frame kinds
        (WebSocket opcodes, SageMaker ``data_type``) they decide; otherwise a chunk is a control frame
        only if the whole chunk decodes as UTF-8 JSON to an object.

        Raises:
            EOFError: the endpoint closed the session normally.
            TTSConnectionError: the connection dropped.
        """
        ...

    async def close(self) -> None:
        """Close both directions; safe to call more than once."""
        ...
