"""TTSSession + WebSocketTransport against fake Leg 1 servers on 127.0.0.1:0 that record what they got."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.sync.server import ServerConnection as SyncServerConnection
from websockets.sync.server import serve as sync_serve

from strands_voice.connect import transport_from_url
from strands_voice.errors import TTSConnectionError, TTSTimeoutError
from strands_voice.session import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestStarted,
    SessionEvent,
    TTSSession,
)
from strands_voice.websocket import WebSocketTransport

Handler = Callable[[ServerConnection, list[dict[str, Any]]], Awaitable[None]]


def run(coro: Coroutine[Any, Any, Any], timeout: float = 20.0) -> Any:
    """Run a test coroutine with a hard limit, so a hang is a failure, not a stuck suite."""

    async def main() -> Any:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(main())


@contextlib.asynccontextmanager
async def fake_server(handler: Handler) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """A WebSocket server on a free loopback port; yields (url, messages it received, as parsed JSON)."""
    received: list[dict[str, Any]] = []

    async def handle(ws: ServerConnection) -> None:
        await handler(ws, received)

    async with serve(handle, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/invocations-bidirectional-stream", received


async def recv_json(ws: ServerConnection, received: list[dict[str, Any]]) -> dict[str, Any]:
    message = json.loads(await ws.recv())
    message["_t"] = time.monotonic()
    received.append(message)
    return message


def start(rid: str) -> str:
    return json.dumps({"type": "synthesis_start", "request_id": rid, "format": "pcm16", "sample_rate": 24000})


def complete(rid: str, nbytes: int) -> str:
    return json.dumps(
        {
            "type": "synthesis_complete",
            "request_id": rid,
            "audio_bytes": nbytes,
            "total_duration_s": nbytes / 48000,
            "elapsed_s": 0.01,
        }
    )


async def answer(ws: ServerConnection, rid: str, pieces: list[bytes]) -> None:
    await ws.send(start(rid))
    for piece in pieces:
        await ws.send(piece)
    await ws.send(complete(rid, sum(map(len, pieces))))


async def collect(session: TTSSession) -> list[SessionEvent]:
    return [event async for event in session]


def test_pipelined_sends_and_ordered_events() -> None:
    """Chunk 2 is sent before chunk 1's audio: the server answers nothing until it holds both."""

    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        second = await recv_json(ws, received)  # a client waiting for audio 1 would deadlock here
        # Audio that starts with "{" must stay audio: frame kinds come from the WebSocket opcode.
        await answer(ws, first["request_id"], [b"{\x01" * 100, b"\x02" * 300])
        await answer(ws, second["request_id"], [b"\x03" * 200])
        assert (await recv_json(ws, received))["type"] == "close"
        await ws.close()

    async def main() -> None:
        async with fake_server(handler) as (url, received):
            async with TTSSession(
                WebSocketTransport(url), voice="jm_kumo", speed=1.1, silence_timeout=5
            ) as session:
                rid1 = await session.synthesize("Hello there.")
                rid2 = await session.synthesize("How are you?", voice="af_heart")
                assert session.owed == [rid1, rid2]
                await session.finish()
                events = await collect(session)
            assert received[0] == {
                "type": "synthesize",
                "text": "Hello there.",
                "voice": "jm_kumo",
                "speed": 1.1,
                "request_id": rid1,
                "_t": received[0]["_t"],
            }
            assert received[1]["voice"] == "af_heart" and received[1]["request_id"] == rid2
            assert received[2]["type"] == "close"
            assert events == [
                RequestStarted(rid1, "pcm16", 24000, 1),
                AudioChunk(rid1, b"{\x01" * 100),
                AudioChunk(rid1, b"\x02" * 300),
                RequestCompleted(rid1, 500, 500 / 48000, 0.01),
                RequestStarted(rid2, "pcm16", 24000, 1),
                AudioChunk(rid2, b"\x03" * 200),
                RequestCompleted(rid2, 200, 200 / 48000, 0.01),
            ]
            assert session.owed == []

    run(main())


def test_request_error_keeps_session_usable() -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        await ws.send(
            json.dumps(
                {
                    "type": "error",
                    "request_id": first["request_id"],
                    "code": "text_too_long",
                    "message": "The text is too long.",
                }
            )
        )
        second = await recv_json(ws, received)
        await answer(ws, second["request_id"], [b"\x00" * 48])
        await recv_json(ws, received)
        await ws.close()

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            async with TTSSession(WebSocketTransport(url), silence_timeout=5) as session:
                rid1 = await session.synthesize("x" * 50)
                events = []
                async for event in session:
                    events.append(event)
                    if isinstance(event, RequestFailed):
                        rid2 = await session.synthesize("Fine.")
                        await session.finish()
            assert events[0] == RequestFailed(rid1, "text_too_long", "The text is too long.")
            assert events[-1] == RequestCompleted(rid2, 48, 0.001, 0.01)

    run(main())


def test_connect_timeout() -> None:
    """A server that accepts TCP but never answers the handshake: a typed timeout, not a hang."""

    async def main() -> None:
        accepted: list[asyncio.StreamWriter] = []

        async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(writer)

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            session = TTSSession(WebSocketTransport(f"ws://127.0.0.1:{port}/x"), connect_timeout=0.3)
            began = time.monotonic()
            # A hang would run into the guard; the timeout fires long before it (0.3 s of 30 s).
            async with asyncio.timeout(30):
                with pytest.raises(TTSTimeoutError) as caught:
                    await session.open()
            assert caught.value.code == "connect_timeout"
            assert time.monotonic() - began > 0.25  # not before its own timeout
            assert accepted, "the client never reached the server"
        finally:
            for writer in accepted:
                writer.close()
            server.close()
            await server.wait_closed()

    run(main())


def test_connection_refused_is_typed() -> None:
    async def main() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        with pytest.raises(TTSConnectionError) as caught:
            await TTSSession(transport_from_url(f"ws://127.0.0.1:{port}/x")).open()
        assert caught.value.code == "connection_failed"

    run(main())


def test_silence_timeout_while_audio_is_owed() -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        await ws.send(start(first["request_id"]))
        await ws.send(b"\x00" * 96)
        await ws.wait_closed()  # then silence, until the client goes

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            async with TTSSession(WebSocketTransport(url), silence_timeout=0.4) as session:
                # Nothing owed yet: an idle session does not time out.
                await asyncio.sleep(0.6)
                rid = await session.synthesize("Hello.")
                events: list[SessionEvent] = []
                began = time.monotonic()
                async with asyncio.timeout(30):  # a guard against a hang, not a speed limit
                    with pytest.raises(TTSTimeoutError) as caught:
                        async for event in session:
                            events.append(event)
                assert caught.value.code == "silence_timeout" and caught.value.request_id == rid
                assert time.monotonic() - began > 0.3  # not before the silence it counts
                assert events == [RequestStarted(rid, "pcm16", 24000, 1), AudioChunk(rid, b"\x00" * 96)]

    run(main())


def test_silence_timeout_applies_to_a_request_sent_while_waiting() -> None:
    """The receiver already waited (nothing owed) when the request went out: the timeout still applies."""

    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        await recv_json(ws, received)
        await ws.wait_closed()

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            async with TTSSession(WebSocketTransport(url), silence_timeout=0.4) as session:
                receiver = asyncio.create_task(collect(session))
                await asyncio.sleep(0.2)
                await session.synthesize("Hello.")
                with pytest.raises(TTSTimeoutError):
                    await receiver

    run(main())


def test_a_slow_reader_is_not_mistaken_for_a_silent_endpoint() -> None:
    """The silence clock restarts when the reader comes back, not from the last frame it was given."""

    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        message = await recv_json(ws, received)
        rid = message["request_id"]
        await ws.send(start(rid))
        await asyncio.sleep(1.3)  # e.g. paused by the reader's own backpressure
        await ws.send(b"\x01\x02" * 10)
        await ws.send(complete(rid, 20))
        await ws.wait_closed()

    async def main() -> None:
        async with fake_server(handler) as (url, _received):
            session = TTSSession(WebSocketTransport(url), silence_timeout=0.6)
            await session.open()
            await session.synthesize("Hello.", request_id="r1")
            await session.finish()
            events = session.events()
            first = await anext(events)
            await asyncio.sleep(1.0)  # the reader is away longer than the silence timeout
            rest = [event async for event in events]
            await session.close()
        assert isinstance(first, RequestStarted)
        assert [type(event) for event in rest] == [AudioChunk, RequestCompleted]

    run(main())


@pytest.mark.parametrize("how", ["abort", "close_1011", "close_1000"])
def test_dropped_connection_is_typed(how: str) -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        await ws.send(start(first["request_id"]))
        await ws.send(b"\x01" * 96)
        if how == "abort":
            ws.transport.abort()
        elif how == "close_1011":
            await ws.close(1011, "internal error")
        else:
            await ws.close()  # a normal close while audio is still owed is a drop too

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            # The drop is noticed from the connection itself: the silence timeout (a TTSTimeoutError, not
            # a TTSConnectionError) is far away, and the guard only stops a hang.
            async with TTSSession(WebSocketTransport(url), silence_timeout=300) as session:
                rid = await session.synthesize("Hello.")
                events: list[SessionEvent] = []
                async with asyncio.timeout(60):
                    with pytest.raises(TTSConnectionError) as caught:
                        async for event in session:
                            events.append(event)
                assert events[-1] == AudioChunk(rid, b"\x01" * 96)
                assert caught.value.code in {"connection_dropped", "connection_closed"}
                with pytest.raises(TTSConnectionError):
                    await session.synthesize("After the drop.")

    run(main())


def test_cancel_drops_audio_and_ends_requests() -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        second = await recv_json(ws, received)
        await ws.send(start(first["request_id"]))
        await ws.send(b"\x01" * 96)
        cancel = await recv_json(ws, received)
        assert cancel == {"type": "cancel", "_t": cancel["_t"]}
        await ws.send(b"\x02" * 96)  # already in flight when the cancel arrived: the client drops it
        await ws.send(json.dumps({"type": "synthesis_cancelled", "request_id": first["request_id"]}))
        await ws.send(json.dumps({"type": "synthesis_cancelled", "request_id": second["request_id"]}))
        third = await recv_json(ws, received)
        await answer(ws, third["request_id"], [b"\x03" * 48])
        await recv_json(ws, received)
        await ws.close()

    async def main() -> None:
        async with fake_server(handler) as (url, received):
            async with TTSSession(WebSocketTransport(url), silence_timeout=5) as session:
                rid1 = await session.synthesize("One.")
                rid2 = await session.synthesize("Two.")
                events: list[SessionEvent] = []
                async for event in session:
                    events.append(event)
                    if isinstance(event, AudioChunk) and event.request_id == rid1:
                        await session.cancel()
                    if isinstance(event, RequestCancelled) and event.request_id == rid2:
                        rid3 = await session.synthesize("Three.")
                        await session.finish()
            assert events == [
                RequestStarted(rid1, "pcm16", 24000, 1),
                AudioChunk(rid1, b"\x01" * 96),
                RequestCancelled(rid1),
                RequestCancelled(rid2),
                RequestStarted(rid3, "pcm16", 24000, 1),
                AudioChunk(rid3, b"\x03" * 48),
                RequestCompleted(rid3, 48, 0.001, 0.01),
            ]
            assert [m["type"] for m in received] == [
                "synthesize",
                "synthesize",
                "cancel",
                "synthesize",
                "close",
            ]

    run(main())


def test_close_is_prompt_idempotent_and_ends_the_connection() -> None:
    closed = asyncio.Event()

    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        await recv_json(ws, received)
        with contextlib.suppress(Exception):
            await ws.recv()  # returns/raises when the client closes
        closed.set()

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            session = TTSSession(WebSocketTransport(url), silence_timeout=300)
            await session.open()
            await session.synthesize("Hello.")
            receiver = asyncio.create_task(collect(session))
            await asyncio.sleep(0.1)
            # close() does not wait for the owed audio (nor for the 300 s silence timeout).
            async with asyncio.timeout(60):
                await session.close()
                await session.close()
            with pytest.raises(TTSConnectionError):
                await receiver
            async with asyncio.timeout(30):
                await closed.wait()
            assert not session.is_open
            with pytest.raises(TTSConnectionError):
                await session.synthesize("Closed.")
        assert asyncio.all_tasks() == {asyncio.current_task()}

    run(main())


def test_transport_from_url_schemes() -> None:
    transport = transport_from_url("http://127.0.0.1:8080")
    assert isinstance(transport, WebSocketTransport)
    assert transport.url == "ws://127.0.0.1:8080/invocations-bidirectional-stream"
    bare = transport_from_url("ws://127.0.0.1:8080")
    assert isinstance(bare, WebSocketTransport)
    assert bare.url == "ws://127.0.0.1:8080/invocations-bidirectional-stream"
    explicit = transport_from_url("wss://h/x")
    assert isinstance(explicit, WebSocketTransport)
    assert explicit.url == "wss://h/x"
    with pytest.raises(ValueError):
        transport_from_url("ftp://h/x")


@pytest.mark.parametrize("who_closes", ["client", "endpoint"])
def test_close_leaves_no_websocket_task_behind(who_closes: str) -> None:
    """websockets cancels its keepalive task on connection loss without awaiting it; close() must.

    Found by CI: a check that no task outlived a run saw ``Connection.keepalive()`` still cancelling.
    The server runs on its own thread so that every task left on this loop is the client's.
    """

    def handler(ws: SyncServerConnection) -> None:
        with contextlib.suppress(Exception):
            for message in ws:
                if message == "bye":
                    ws.close()

    with sync_serve(handler, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, name="fake-endpoint")
        thread.start()
        url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/invocations-bidirectional-stream"

        async def main() -> None:
            for _ in range(20):
                # A keepalive ping in flight most of the time: the state in which the race shows.
                transport = WebSocketTransport(url, ping_interval=0.001, ping_timeout=5)
                await transport.connect()
                await asyncio.sleep(0.005)
                if who_closes == "endpoint":
                    await transport.send("bye")
                    with pytest.raises(EOFError):
                        await transport.receive()
                await transport.close()
                assert asyncio.all_tasks() == {asyncio.current_task()}

        try:
            run(main())
        finally:
            server.shutdown()
            thread.join(timeout=5)
