"""The WebSocket transport: Leg 1 frames over a plain WebSocket (local container or any host).

A thin :class:`~strands_voice.transports.FrameTransport` over the ``websockets`` asyncio client. Frame
kinds come from WebSocket opcodes: text frames are control messages, binary frames are audio.

Errors carry the agent-side codes of PROTOCOL.md and say whether trying again may help: a refused or
dropped connection (``connection_failed``/``connection_lost``) and an endpoint at capacity (close 1013,
HTTP 429/503 at the handshake: ``busy``) are retryable; a refused upgrade (404, 403, ...) and a close
that refuses the data (1003, 1007, 1008, 1009, 1010) are not. The
connection sends WebSocket pings (``ping_interval``, 20 s by default) that keep proxies and NATs from
dropping a quiet connection; the endpoint's own idle clock is kept by the session's ``keepalive``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import TTSConnectionError, TTSTimeoutError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    ConnectionClosed,
    ConnectionClosedOK,
    InvalidHandshake,
    InvalidStatus,
    InvalidURI,
)

from strands_voice.transports._base import CONNECT_TIMEOUT_S, Frame

__all__ = ["WebSocketTransport"]

logger = logging.getLogger(__name__)

#: Close code "try again later": the endpoint is at capacity or still loading its model.
_TRY_AGAIN_LATER = 1013
#: Close codes that say the endpoint refused what this client sent (unsupported data 1003, invalid
#: payload 1007, policy violation 1008, message too big 1009, missing extension 1010): the same frames
#: sent again would be refused again, so these are not retried.
NON_TRANSIENT_CLOSE_CODES = frozenset({1003, 1007, 1008, 1009, 1010})
#: Handshake statuses that mean "busy, come back later".
_BUSY_STATUSES = frozenset({429, 503})


class WebSocketTransport:
    """A :class:`~strands_voice.transports.FrameTransport` over one WebSocket connection at a time.

    :meth:`connect` after :meth:`close` opens a new connection (the session resumes this way).

    Args:
        url: ``ws://`` or ``wss://`` URL of the endpoint's ``/invocations-bidirectional-stream`` route.
        connect_timeout: Seconds the opening handshake may take.
        close_timeout: Seconds to wait for the closing handshake.
        **connect_options: Passed to ``websockets.asyncio.client.connect`` (e.g. ``ssl``,
            ``additional_headers``).
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        close_timeout: float = 2.0,
        **connect_options: Any,
    ) -> None:
        self.url = url
        self.connect_timeout = connect_timeout
        self.close_timeout = close_timeout
        self._options = connect_options
        self._connection: ClientConnection | None = None
        # websockets cancels its keepalive task when the connection is lost but never awaits it; we do,
        # so that close() leaves no task of ours behind on the caller's loop.
        self._keepalive: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        """Open the WebSocket.

        Raises:
            TTSTimeoutError: the handshake took longer than ``connect_timeout``.
            TTSConnectionError: the endpoint could not be reached or refused the upgrade.
        """
        options: dict[str, Any] = {
            "open_timeout": None,  # enforced below, as a typed error
            "close_timeout": self.close_timeout,
            "max_size": None,  # audio frames are the endpoint's to size
            "proxy": None,
            **self._options,
        }
        try:
            async with asyncio.timeout(self.connect_timeout):
                self._connection = await connect(self.url, **options)
            self._keepalive = self._connection.keepalive_task
        except TimeoutError:
            raise TTSTimeoutError(
                "connect_timeout",
                f"no WebSocket handshake with the TTS endpoint within {self.connect_timeout} s",
                retryable=True,
            ) from None
        except InvalidStatus as exc:
            status = exc.response.status_code
            logger.debug("url=<%s>, status=<%d> | upgrade refused", self.url, status)
            if status in _BUSY_STATUSES:
                raise TTSConnectionError(
                    "busy", f"the TTS endpoint is busy (HTTP {status}); try again later", retryable=True
                ) from None
            raise TTSConnectionError(
                "connection_failed", f"the TTS endpoint refused the WebSocket (HTTP {status})"
            ) from None
        except (InvalidHandshake, InvalidURI) as exc:
            logger.debug("url=<%s> | connect failed: %r", self.url, exc)
            raise TTSConnectionError(
                "connection_failed", "could not open a WebSocket to the TTS endpoint"
            ) from None
        except (OSError, ConnectionClosed) as exc:
            logger.debug("url=<%s> | connect failed: %r", self.url, exc)
            raise TTSConnectionError(
                "connection_failed", "could not open a WebSocket to the TTS endpoint", retryable=True
            ) from None
        logger.debug("url=<%s> | connected", self.url)

    def _require(self) -> ClientConnection:
        if self._connection is None:
            raise TTSConnectionError("connection_lost", "the WebSocket is not connected")
        return self._connection

    def _closed_error(self, exc: ConnectionClosed) -> TTSConnectionError:
        received = exc.rcvd
        if received is not None and received.code == _TRY_AGAIN_LATER:
            return TTSConnectionError(
                "busy", "the TTS endpoint is at capacity (close 1013); try again later", retryable=True
            )
        if received is not None and received.code in NON_TRANSIENT_CLOSE_CODES:
            return TTSConnectionError(
                "connection_lost",
                f"the TTS endpoint refused the session's data (close {received.code})",
                retryable=False,
            )
        return TTSConnectionError(
            "connection_lost", "the WebSocket to the TTS endpoint dropped", retryable=True
        )

    async def send(self, message: str) -> None:
        """Send one client message as one text frame.

        Raises:
            TTSConnectionError: the connection is closed or dropped.
        """
        try:
            await self._require().send(message)
        except ConnectionClosed as exc:
            raise self._closed_error(exc) from None

    async def receive(self) -> Frame:
        """The next frame: ``str`` for a text (control) frame, ``bytes`` for a binary (audio) frame.

        Raises:
            EOFError: the endpoint closed the session normally (code 1000/1001).
            TTSConnectionError: the connection dropped (``connection_lost``) or the endpoint closed it
                with 1013 (``busy``); both retryable. A close with a code of
                :data:`NON_TRANSIENT_CLOSE_CODES` is ``connection_lost``, not retryable.
        """
        try:
            return await self._require().recv()
        except ConnectionClosedOK:
            raise EOFError("the TTS endpoint closed the session") from None
        except ConnectionClosed as exc:
            logger.debug("url=<%s> | connection dropped: %r", self.url, exc)
            raise self._closed_error(exc) from None

    async def close(self) -> None:
        """Close the WebSocket (bounded by ``close_timeout``); safe to call more than once."""
        connection, self._connection = self._connection, None
        keepalive, self._keepalive = self._keepalive, None
        try:
            if connection is not None:
                await connection.close()
        except BaseException:
            # websockets leaves the socket open when its closing handshake is cancelled (our task cut,
            # or its loop ending): nothing would ever close it.
            if connection is not None:
                connection.transport.abort()
            raise
        finally:
            if keepalive is not None:
                await cancel_and_wait([keepalive], self.close_timeout)
