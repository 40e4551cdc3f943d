"""The WebSocket transport's close, against a fake endpoint on ``127.0.0.1:0`` that accepts the upgrade and
then reads nothing more: a close cut short (its task cancelled, its loop ending) still closes the socket."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.server import ServerConnection, serve

from strands_voice.transports import WebSocketTransport


async def _deaf(connection: ServerConnection) -> None:
    connection.transport.pause_reading()  # the client's close frame is never read, so never answered
    await connection.wait_closed()


def test_a_close_cancelled_during_the_closing_handshake_closes_the_socket() -> None:
    async def main() -> None:
        async with serve(_deaf, "127.0.0.1", 0, close_timeout=0.5) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            transport = WebSocketTransport(f"ws://127.0.0.1:{port}/ws", close_timeout=30.0)
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
