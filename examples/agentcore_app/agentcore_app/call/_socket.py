"""What a call needs of its connection, and a connection whose first message was already read.

:class:`Call` talks to a :class:`CallSocket`: Starlette's ``WebSocket`` is one (a ``/ws`` caller), a phone
line (:mod:`agentcore_app.call._phone`) another. ``/ws`` reads a connection's first message to tell a
Twilio stream from a Leg 3 caller; :class:`Replayed` hands that message to the call first, then reads on.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Protocol

from starlette.websockets import WebSocket, WebSocketState

__all__ = ["CallSocket", "Replayed"]


class CallSocket(Protocol):
    """A call's connection: ASGI messages in, text and binary frames out."""

    @property
    def application_state(self) -> WebSocketState:
        """Whether the server side has closed it."""

    async def receive(self) -> MutableMapping[str, Any]:
        """The next ASGI message (``websocket.receive`` with ``text`` or ``bytes``, or a disconnect)."""

    async def send_text(self, data: str) -> None:
        """A text frame out."""

    async def send_bytes(self, data: bytes) -> None:
        """A binary frame out."""

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        """Close the connection."""


class Replayed:
    """``websocket`` with ``first`` (a message already received) received again first; ``first`` None:
    the wait for it timed out, and the first receive raises ``TimeoutError`` (the call's idle rule)."""

    def __init__(self, websocket: WebSocket, first: MutableMapping[str, Any] | None) -> None:
        self.websocket = websocket
        self._first = first
        self._replayed = False

    @property
    def application_state(self) -> WebSocketState:
        return self.websocket.application_state

    async def receive(self) -> MutableMapping[str, Any]:
        if not self._replayed:
            self._replayed = True
            if self._first is None:
                raise TimeoutError
            return self._first
        return await self.websocket.receive()

    async def send_text(self, data: str) -> None:
        await self.websocket.send_text(data)

    async def send_bytes(self, data: bytes) -> None:
        await self.websocket.send_bytes(data)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        await self.websocket.close(code, reason)
