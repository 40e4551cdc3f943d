"""The WebSocket transport's close, against a fake endpoint on ``127.0.0.1:0`` that accepts the upgrade and
then never answers: a close cut short (its task cancelled, its loop ending) still closes the socket."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from strands_voice.transports import WebSocketTransport

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def _accept_then_ignore(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Completes the upgrade, then reads and drops every frame (the close frame too) until the client goes."""
    request = await reader.readuntil(b"\r\n\r\n")
    key = next(
        line.split(b":", 1)[1].strip()
        for line in request.split(b"\r\n")
        if line.lower().startswith(b"sec-websocket-key:")
    )
    accept = base64.b64encode(hashlib.sha1(key + _GUID).digest())
    writer.write(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )
    while await reader.read(4096):
        pass
    writer.close()


@asynccontextmanager
async def silent_endpoint() -> AsyncIterator[str]:
    server = await asyncio.start_server(_accept_then_ignore, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        server.close()
        await server.wait_closed()


def test_a_close_cancelled_during_the_closing_handshake_closes_the_socket() -> None:
    async def main() -> None:
        async with silent_endpoint() as url:
            transport = WebSocketTransport(url, close_timeout=30.0)
            await transport.connect()
            connection = transport._connection
            assert connection is not None
            closing = asyncio.create_task(transport.close())
            await asyncio.sleep(0.3)
            assert not closing.done()  # waiting for an answer to its close frame that never comes
            closing.cancel()
            with pytest.raises(asyncio.CancelledError):
                await closing
            assert connection.transport.is_closing()
            await transport.close()  # a second close is a no-op

    asyncio.run(main())
