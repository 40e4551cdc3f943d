"""TTSSession + WebSocketTransport against fake Leg 1 servers on 127.0.0.1:0 that record what they got."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strands_voice_protocol.errors import AGENT_ERROR_CODES, TTSConnectionError, TTSTimeoutError
from support.clocks import FakeTime
from websockets.asyncio.server import ServerConnection, serve
from websockets.sync.server import ServerConnection as SyncServerConnection
from websockets.sync.server import serve as sync_serve

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
)
from strands_voice.session._retry import NO_RETRY, RetryPolicy
from strands_voice.transports._url import transport_from_url
from strands_voice.transports._websocket import WebSocketTransport

Handler = Callable[[ServerConnection, list[dict[str, Any]]], Awaitable[None]]


class WatchedTransport(WebSocketTransport):
    """The real WebSocket transport, counting the session's closes of it (a lost connection is closed)."""

    closes = 0

    async def close(self) -> None:
        self.closes += 1
        await super().close()


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


async def cut(ws: ServerConnection, how: str) -> None:
    """End the connection under a session the way ``how`` says."""
    if how == "abort":
        ws.transport.abort()  # a TCP reset: no close frame
    elif how == "close_1011":
        await ws.close(1011, "internal error")
    elif how == "close_1001":
        await ws.close(1001, "going away")  # a server shutting down: a normal close
    else:
        await ws.close()  # a normal close while audio is still owed is a drop too


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
def test_dropped_connection_is_typed_when_resume_is_off(how: str) -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        first = await recv_json(ws, received)
        await ws.send(start(first["request_id"]))
        await ws.send(b"\x01" * 96)
        await cut(ws, how)

    async def main() -> None:
        async with fake_server(handler) as (url, _):
            # The drop is noticed from the connection itself: the silence timeout (a TTSTimeoutError, not
            # a TTSConnectionError) is far away, and the guard only stops a hang.
            async with TTSSession(WebSocketTransport(url), silence_timeout=300, retry=NO_RETRY) as session:
                rid = await session.synthesize("Hello.")
                events: list[SessionEvent] = []
                async with asyncio.timeout(60):
                    with pytest.raises(TTSConnectionError) as caught:
                        async for event in session:
                            events.append(event)
                # Nothing replays the cut request: no RequestRestarted, the error ends the iteration.
                assert events[-1] == AudioChunk(rid, b"\x01" * 96)
                assert caught.value.code == "connection_lost" and caught.value.request_id == rid
                assert caught.value.code in AGENT_ERROR_CODES and not caught.value.retryable
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


# ---- resume and retry ---------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def scripted_server(
    handlers: list[Handler], *, refuse_first: int | None = None
) -> AsyncIterator[tuple[str, list[list[dict[str, Any]]]]]:
    """A server whose n-th connection runs ``handlers[n]``; yields (url, messages per connection).

    ``refuse_first`` answers the first handshake with that HTTP status instead.
    """
    received: list[list[dict[str, Any]]] = []
    handshakes = 0

    def process_request(connection: ServerConnection, request: Any) -> Any:
        nonlocal handshakes
        handshakes += 1
        if refuse_first is not None and handshakes == 1:
            return connection.respond(refuse_first, "try again later\n")
        return None

    async def handle(ws: ServerConnection) -> None:
        index = len(received)
        received.append([])
        assert index < len(handlers), "more connections than the script has"
        await handlers[index](ws, received[index])

    async with serve(handle, "127.0.0.1", 0, process_request=process_request) as server:
        port = server.sockets[0].getsockname()[1]
        yield f"ws://127.0.0.1:{port}/invocations-bidirectional-stream", received


async def drain_client(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
    """Record what the client still sends until it goes."""
    with contextlib.suppress(Exception):
        while True:
            await recv_json(ws, received)


def answers(*audio: list[bytes]) -> Handler:
    """A connection that reads one request per entry, answers each with its pieces, then listens."""

    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        ids = [(await recv_json(ws, received))["request_id"] for _ in audio]
        for rid, pieces in zip(ids, audio, strict=True):
            await answer(ws, rid, pieces)
        await drain_client(ws, received)

    return handler


def resumable(url: str, fake: FakeTime, **options: Any) -> TTSSession:
    """A session to ``url`` whose retries run on ``fake``'s clock."""
    return TTSSession(WebSocketTransport(url), silence_timeout=10, retry=fake.policy(), **options)


async def until(predicate: Callable[[], bool], limit_s: float = 10.0) -> None:
    """Wait (bounded) until ``predicate()`` holds."""
    async with asyncio.timeout(limit_s):
        for _ in itertools.count():
            if predicate():
                return
            await asyncio.sleep(0.01)


def wire(received: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(m["type"], m.get("request_id")) for m in received]


@pytest.mark.parametrize("how", ["abort", "close_1011", "close_1001"])
def test_resume_replays_every_unfinished_request_and_no_completed_byte(how: str) -> None:
    """Three requests; the first completes, the second is cut mid-audio, the third never started."""

    async def first(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        ids = [(await recv_json(ws, received))["request_id"] for _ in range(3)]
        await answer(ws, ids[0], [b"\x01" * 96])
        await ws.send(start(ids[1]))
        await ws.send(b"\x02" * 48)
        await cut(ws, how)

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([first, answers([b"\x02" * 48, b"\x03" * 48], [b"\x04" * 96])]) as (
            url,
            received,
        ):
            async with resumable(url, fake) as session:
                rids = [await session.synthesize(f"Sentence {n}.") for n in range(3)]
                events: list[SessionEvent] = []
                async for event in session:
                    events.append(event)
                    if isinstance(event, RequestCompleted) and event.request_id == rids[2]:
                        await session.finish()
                assert session.reconnects == 1
        r0, r1, r2 = rids
        assert events == [
            RequestStarted(r0, "pcm16", 24000, 1),
            AudioChunk(r0, b"\x01" * 96),
            RequestCompleted(r0, 96, 0.002, 0.01),
            RequestStarted(r1, "pcm16", 24000, 1),
            AudioChunk(r1, b"\x02" * 48),
            RequestRestarted(r1, 48),  # the partial audio is void: the request comes again, whole
            RequestStarted(r1, "pcm16", 24000, 1),
            AudioChunk(r1, b"\x02" * 48),
            AudioChunk(r1, b"\x03" * 48),
            RequestCompleted(r1, 96, 0.002, 0.01),
            RequestStarted(r2, "pcm16", 24000, 1),
            AudioChunk(r2, b"\x04" * 96),
            RequestCompleted(r2, 96, 0.002, 0.01),
        ]
        # The completed request is never sent again; the others are, in order, under fresh wire ids.
        assert wire(received[0]) == [("synthesize", r0), ("synthesize", r1), ("synthesize", r2)]
        assert wire(received[1])[:2] == [("synthesize", f"{r1}~1"), ("synthesize", f"{r2}~1")]
        assert [m["text"] for m in received[1][:2]] == ["Sentence 1.", "Sentence 2."]
        assert fake.sleeps == [0.25 * 0.75]  # one backoff: the first delay, jittered by random() = 0.5

    run(main())


def test_requests_sent_while_the_connection_is_down_go_out_in_order_after_it() -> None:
    """Requests made during an outage wait; ``finish`` during it is re-sent after the replay."""

    async def first(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        await recv_json(ws, received)
        ws.transport.abort()

    async def main() -> None:
        fake = FakeTime()
        gate = asyncio.Event()

        async def slow_sleep(seconds: float) -> None:
            await gate.wait()  # the outage lasts until the test has sent more
            await fake.sleep(seconds)

        policy = RetryPolicy(clock=fake.clock, sleep=slow_sleep, random=lambda: 0.5)
        async with scripted_server([first, answers([b"\x05" * 48], [b"\x05" * 48])]) as (
            url,
            received,
        ):
            transport = WatchedTransport(url)
            async with TTSSession(transport, silence_timeout=10, retry=policy) as session:
                r0 = await session.synthesize("Zero.")
                receiver = asyncio.create_task(collect(session))
                await until(lambda: transport.closes > 0)  # the drop was seen: the session closed it
                r1 = await session.synthesize("One.")
                await session.finish()
                gate.set()
                events = await receiver
        assert wire(received[1]) == [("synthesize", f"{r0}~1"), ("synthesize", r1), ("close", None)]
        assert [e.request_id for e in events if isinstance(e, RequestCompleted)] == [r0, r1]

    run(main())


def test_endpoint_at_capacity_close_1013_is_retried() -> None:
    async def refuse(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        # What the endpoint does at capacity: a `busy` error naming no request, then close 1013.
        await ws.send(json.dumps({"type": "error", "code": "busy", "message": "At capacity."}))
        await ws.close(1013, "try again later")

    serve_it = answers([b"\x06" * 48])

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([refuse, refuse, serve_it]) as (url, received):
            async with resumable(url, fake) as session:
                rid = await session.synthesize("Hello.")
                await session.finish()
                events = await collect(session)
        assert not any(isinstance(e, RequestFailed) for e in events), events
        assert events[-1] == RequestCompleted(rid, 48, 0.001, 0.01)
        assert fake.sleeps == [0.25 * 0.75, 0.5 * 0.75]  # exponential: 0.25 s, 0.5 s (jittered)
        assert len(received) == 3

    run(main())


@pytest.mark.parametrize("status", [429, 503])
def test_busy_handshake_is_retried_at_open(status: int) -> None:
    serve_it = answers([b"\x07" * 48])

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([serve_it], refuse_first=status) as (url, _received):
            async with resumable(url, fake) as session:
                rid = await session.synthesize("Hello.")
                await session.finish()
                events = await collect(session)
        assert events[-1] == RequestCompleted(rid, 48, 0.001, 0.01)
        assert len(fake.sleeps) == 1

    run(main())


def test_refused_upgrade_is_not_retried() -> None:
    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([], refuse_first=404) as (url, _):
            with pytest.raises(TTSConnectionError) as caught:
                await TTSSession(WebSocketTransport(url), retry=fake.policy()).open()
        assert caught.value.code == "connection_failed" and not caught.value.retryable
        assert fake.sleeps == []

    run(main())


@pytest.mark.parametrize("code", ["invalid_request", "text_too_long", "unknown_voice", "internal"])
def test_invalid_requests_are_never_retried(code: str) -> None:
    async def handler(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        message = await recv_json(ws, received)
        await ws.send(
            json.dumps({"type": "error", "request_id": message["request_id"], "code": code, "message": "No."})
        )
        await drain_client(ws, received)

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([handler]) as (url, received):
            async with resumable(url, fake) as session:
                rid = await session.synthesize("Hello.")
                await session.finish()
                events = await collect(session)
        assert events == [RequestFailed(rid, code, "No.")]
        assert wire(received[0]) == [("synthesize", rid), ("close", None)]
        assert fake.sleeps == []

    run(main())


def test_busy_answer_to_one_request_is_retried_in_order() -> None:
    """``busy`` for r0 (r1 and ``close`` already sent): both go again, in order, on a new connection."""

    async def refuse(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        r0 = (await recv_json(ws, received))["request_id"]
        await ws.send(json.dumps({"type": "error", "request_id": r0, "code": "busy", "message": "Full."}))
        await drain_client(ws, received)

    serve_it = answers([b"\x08" * 48], [b"\x09" * 48])

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([refuse, serve_it]) as (url, received):
            async with resumable(url, fake) as session:
                r0 = await session.synthesize("Zero.")
                r1 = await session.synthesize("One.")
                await session.finish()
                events = await collect(session)
        assert [e for e in events if not isinstance(e, RequestStarted)] == [
            AudioChunk(r0, b"\x08" * 48),
            RequestCompleted(r0, 48, 0.001, 0.01),
            AudioChunk(r1, b"\x09" * 48),
            RequestCompleted(r1, 48, 0.001, 0.01),
        ]
        assert wire(received[0]) == [("synthesize", r0), ("synthesize", r1), ("close", None)]
        assert wire(received[1]) == [("synthesize", f"{r0}~1"), ("synthesize", f"{r1}~1"), ("close", None)]
        assert len(fake.sleeps) == 1

    run(main())


def test_resume_gives_up_after_the_deadline_with_one_error() -> None:
    """The endpoint is gone for good: attempts stop at the deadline and ONE error ends the iteration."""

    async def main() -> None:
        fake = FakeTime()

        async def vanish(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
            await recv_json(ws, received)
            await ws.send(start(received[0]["request_id"]))
            server_gone.set()
            ws.transport.abort()

        server_gone = asyncio.Event()
        async with scripted_server([vanish]) as (url, _):
            session = TTSSession(
                WebSocketTransport(url), silence_timeout=10, retry=fake.policy(deadline_s=20)
            )
            await session.open()
            rid = await session.synthesize("Hello.")
            await server_gone.wait()
        # The server is closed now: every reconnect is refused.
        events: list[SessionEvent] = []
        with pytest.raises(TTSConnectionError) as caught:
            async for event in session:
                events.append(event)
        await session.close()
        assert caught.value.code == "connection_lost" and caught.value.request_id == rid
        assert "speech stopped" in caught.value.message
        assert events == [RequestStarted(rid, "pcm16", 24000, 1)]
        # 0.25, 0.5, 1, 2, 4, 5, 5, 5 (x0.75) = 17.1 s; the next 3.75 s would end past the 20 s deadline.
        assert fake.sleeps == [d * 0.75 for d in (0.25, 0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0)]

    run(main())


def test_retry_policy_schedule() -> None:
    draws = iter([0.0, 0.999, 0.5, 0.5])
    policy = RetryPolicy(initial_delay_s=1.0, max_delay_s=3.0, jitter=0.5, random=lambda: next(draws))
    assert [policy.delay(n) for n in range(4)] == [0.5, pytest.approx(1.999), 3.0 * 0.75, 3.0 * 0.75]
    assert not NO_RETRY.enabled and RetryPolicy().enabled
    with pytest.raises(ValueError):
        RetryPolicy(initial_delay_s=2.0, max_delay_s=1.0)


def test_keepalive_while_nothing_is_owed_and_idle_close_resumes_lazily() -> None:
    """A quiet session sends ``keepalive``s; an idle close is resumed only when a request comes."""
    got_keepalives = asyncio.Event()

    async def idle(ws: ServerConnection, received: list[dict[str, Any]]) -> None:
        while sum(m["type"] == "keepalive" for m in received) < 2:
            await recv_json(ws, received)
        got_keepalives.set()
        await ws.close(1000, "idle timeout")  # what the endpoint does after its idle timeout

    serve_it = answers([b"\x0a" * 48])

    async def main() -> None:
        fake = FakeTime()
        async with scripted_server([idle, serve_it]) as (url, received):
            transport = WatchedTransport(url)
            session = TTSSession(transport, keepalive_s=0.05, retry=fake.policy())
            await session.open()
            receiver = asyncio.create_task(collect(session))
            await got_keepalives.wait()
            await until(lambda: transport.closes > 0)  # the idle close was seen
            assert len(received) == 1, "reconnected with nothing to send"
            rid = await session.synthesize("Later.")
            await session.finish()
            events = await receiver
            await session.close()
        assert events[-1] == RequestCompleted(rid, 48, 0.001, 0.01)
        assert wire(received[1]) == [("synthesize", rid), ("close", None)]

    run(main())


def test_a_wakeup_is_not_the_silence_timer_running_out() -> None:
    """Requests sent while the iterator waits wake it; the silence timer (owed audio) keeps its time."""

    async def main() -> None:
        async with scripted_server([answers([b"\x01" * 48], [b"\x02" * 48])]) as (url, _received):
            session = TTSSession(WebSocketTransport(url), silence_timeout=5.0)
            await session.open()
            receiver = asyncio.create_task(collect(session))
            first = await session.synthesize("One.")
            await asyncio.sleep(0.1)  # the iterator now waits, with the silence timer set
            second = await session.synthesize("Two.")  # wakes it; the server answers only now
            await session.finish()
            events = await receiver
            await session.close()
        completed = [e.request_id for e in events if isinstance(e, RequestCompleted)]
        assert completed == [first, second]

    run(main())


class FlakyEndpoint:
    """An in-memory Leg 1 endpoint (a FrameTransport) whose n-th connection drops after ``drops[n]``
    frames; connections past the plan never drop. Answers in order, each text with its own audio."""

    def __init__(self, audio: dict[str, list[bytes]], drops: list[int]) -> None:
        self.audio = audio
        self.drops = drops
        self.connections = 0
        self._frames: asyncio.Queue[str | bytes | None] = asyncio.Queue()
        self._budget: int | None = None

    async def connect(self) -> None:
        self._frames = asyncio.Queue()
        self._budget = self.drops[self.connections] if self.connections < len(self.drops) else None
        self.connections += 1

    async def send(self, message: str) -> None:
        decoded = json.loads(message)
        if decoded["type"] == "synthesize":
            rid, pieces = decoded["request_id"], self.audio[decoded["text"]]
            for frame in [start(rid), *pieces, complete(rid, sum(map(len, pieces)))]:
                self._frames.put_nowait(frame)
        elif decoded["type"] == "close":
            self._frames.put_nowait(None)

    async def receive(self) -> str | bytes:
        if self._budget is not None:
            if self._budget == 0:
                raise TTSConnectionError("connection_lost", "dropped", retryable=True)
            self._budget -= 1
        frame = await self._frames.get()
        if frame is None:
            raise EOFError
        return frame

    async def close(self) -> None:
        return None


@settings(max_examples=60, deadline=None)
@given(
    requests=st.integers(min_value=1, max_value=4),
    drops=st.lists(st.integers(min_value=0, max_value=14), max_size=4),
)
@example(requests=2, drops=[3, 0, 2])  # a drop right at a reconnect, then mid-audio again
def test_resume_property_every_request_once_whole_no_completed_byte_repeated(
    requests: int, drops: list[int]
) -> None:
    texts = [f"Text {n}." for n in range(requests)]
    audio = {text: [bytes([n + 1]) * (4 + k) for k in range(3)] for n, text in enumerate(texts)}

    async def main() -> tuple[list[str], list[SessionEvent]]:
        endpoint = FlakyEndpoint(audio, drops)
        async with TTSSession(endpoint, silence_timeout=10, retry=FakeTime().policy()) as session:
            rids = [await session.synthesize(text) for text in texts]
            await session.finish()
            return rids, await collect(session)

    rids, events = run(main())
    assert [e.request_id for e in events if isinstance(e, RequestCompleted)] == rids
    for rid, text in zip(rids, texts, strict=True):
        mine = [e for e in events if e.request_id == rid]
        completed = next(i for i, e in enumerate(mine) if isinstance(e, RequestCompleted))
        assert completed == len(mine) - 1, "events for a request after its completion"
        restarts = [i for i, e in enumerate(mine) if isinstance(e, RequestRestarted)]
        last = restarts[-1] + 1 if restarts else 0
        # After its last restart the request is answered whole, once.
        assert b"".join(e.data for e in mine[last:] if isinstance(e, AudioChunk)) == b"".join(audio[text])
        # Each restart voids exactly the bytes given since the attempt before it began.
        begin = 0
        for index in restarts:
            given = sum(len(e.data) for e in mine[begin:index] if isinstance(e, AudioChunk))
            restarted = mine[index]
            assert isinstance(restarted, RequestRestarted) and restarted.dropped_bytes == given
            begin = index + 1
