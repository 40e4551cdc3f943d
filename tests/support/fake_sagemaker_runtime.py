"""A stand-in for SageMaker's runtime front end (``InvokeEndpointWithBidirectionalStream``), for tests.

Two ways to play SageMaker's part against the REAL SDK client:

* :class:`InProcessSageMaker`: a duplex HTTP client (``SUPPORTS_DUPLEX_STREAMING = True``, async
  ``send``) handed to the SDK in place of awscrt. It decodes the signed event stream the SDK writes,
  verifies every event signature, and answers through a scripted ``behaviour``.
* :func:`create_forwarding_app`: an ASGI app for hypercorn (TLS, HTTP/2) that does what SageMaker does
  for a bidirectional endpoint: each PayloadPart becomes one WebSocket frame to the container's
  ``/invocations-bidirectional-stream`` (UTF8 → text, otherwise binary) and each container frame comes
  back as one PayloadPart (text → UTF8, binary → BINARY).

The event-stream framing is the AWS SDK's own (``smithy_aws_event_stream``); the signature check follows
SigV4 event signing (each event signs the previous signature, seeded by the request's).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import hmac
import io
import json
import re
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from smithy_aws_event_stream.events import Event, EventHeaderEncoder, EventMessage
from smithy_http import Field, Fields
from smithy_http.aio import HTTPResponse

__all__ = [
    "BIDI_PATH",
    "DUMMY_KEY_ID",
    "DUMMY_SECRET",
    "EventStreamBuffer",
    "FakeStream",
    "InProcessSageMaker",
    "ReceivedPart",
    "SignedEventReader",
    "TLSFiles",
    "create_forwarding_app",
    "encode_exception",
    "encode_payload_part",
    "serve_tls",
]

#: Dummy credentials the tests sign with (the stand-ins verify signatures with the same secret).
DUMMY_KEY_ID = "AKIDSTRANDSVOICETEST"
DUMMY_SECRET = "dummy-secret"


@dataclass(frozen=True)
class TLSFiles:
    """A throwaway CA and a server certificate/key for localhost, on disk."""

    ca_file: str
    cert_file: str
    key_file: str


BIDI_PATH = re.compile(r"^/endpoints/(?P<name>[^/]+)/invocations-bidirectional-stream$")
_AUTH = re.compile(
    r"Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request.*Signature=(?P<sig>[0-9a-f]+)"
)


# -- event-stream framing --------------------------------------------------------------------------


class EventStreamBuffer:
    """Splits a byte stream into whole event-stream messages (sans-I/O)."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while len(self._buffer) >= 12:
            total = int.from_bytes(self._buffer[:4], "big")
            if len(self._buffer) < total:
                break
            chunk, self._buffer = self._buffer[:total], self._buffer[total:]
            event = Event.decode(io.BytesIO(chunk))
            assert event is not None
            events.append(event)
        return events

    @property
    def pending(self) -> int:
        return len(self._buffer)


@dataclass
class ReceivedPart:
    """One PayloadPart as SageMaker received it."""

    data: bytes
    data_type: str | None
    completion_state: str | None
    headers: dict[str, Any]
    signature_ok: bool


def _sign(key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hashlib.sha256).digest()


class SignedEventReader:
    """Decodes the client's signed event stream and checks each event's chunk signature.

    Args:
        authorization: The request's ``Authorization`` header (seeds the signature chain).
        secret_key: The secret the client signs with (tests use dummy credentials).
        event_type: The ``:event-type`` every inner event must have (Transcribe's is ``AudioEvent``).
    """

    def __init__(self, authorization: str, secret_key: str, *, event_type: str = "PayloadPart") -> None:
        match = _AUTH.search(authorization)
        if match is None:
            raise ValueError(f"not a SigV4 Authorization header: {authorization!r}")
        self.access_key = match["key"]
        self.region = match["region"]
        self.service = match["service"]
        self._secret = secret_key.encode()
        self._prior = match["sig"]
        self._buffer = EventStreamBuffer()
        self._event_type = event_type
        self.ended = False

    def _expected(self, date: datetime.datetime, payload: bytes) -> bytes:
        timestamp = date.astimezone(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
        scope = f"{timestamp[:8]}/{self.region}/{self.service}/aws4_request"
        encoder = EventHeaderEncoder()
        encoder.encode_headers({":date": date})
        string_to_sign = "\n".join(
            [
                "AWS4-HMAC-SHA256-PAYLOAD",
                timestamp,
                scope,
                self._prior,
                hashlib.sha256(encoder.get_result()).hexdigest(),
                hashlib.sha256(payload).hexdigest(),
            ]
        )
        key = _sign(b"AWS4" + self._secret, timestamp[:8].encode())
        for part in (self.region, self.service, "aws4_request"):
            key = _sign(key, part.encode())
        return _sign(key, string_to_sign.encode())

    def feed(self, data: bytes) -> list[ReceivedPart | None]:
        """Decode what arrived: a :class:`ReceivedPart` per event, None for the signed end frame."""
        out: list[ReceivedPart | None] = []
        for outer in self._buffer.feed(data):
            headers = dict(outer.message.headers)
            date, signature = headers.get(":date"), headers.get(":chunk-signature")
            ok = isinstance(date, datetime.datetime) and isinstance(signature, bytes)
            if ok:
                ok = hmac.compare_digest(self._expected(date, outer.message.payload), signature)
                self._prior = signature.hex()
            if not outer.message.payload:
                self.ended = True
                out.append(None)
                continue
            inner = Event.decode(io.BytesIO(outer.message.payload))
            assert inner is not None
            inner_headers = dict(inner.message.headers)
            assert inner_headers.get(":message-type") == "event", inner_headers
            assert inner_headers.get(":event-type") == self._event_type, inner_headers
            out.append(
                ReceivedPart(
                    data=inner.message.payload,
                    data_type=inner_headers.get("DataType"),
                    completion_state=inner_headers.get("CompletionState"),
                    headers=inner_headers,
                    signature_ok=ok,
                )
            )
        return out


def encode_payload_part(
    data: bytes, data_type: str | None = None, completion_state: str | None = None
) -> bytes:
    """One response PayloadPart event, as SageMaker frames it."""
    headers: dict[str, Any] = {
        ":message-type": "event",
        ":event-type": "PayloadPart",
        ":content-type": "application/octet-stream",
    }
    if data_type is not None:
        headers["DataType"] = data_type
    if completion_state is not None:
        headers["CompletionState"] = completion_state
    return EventMessage(headers=headers, payload=data).encode()


def encode_exception(kind: str, message: str, error_code: str | None = None) -> bytes:
    """A modeled stream exception event (``ModelStreamError`` or ``InternalStreamFailure``)."""
    body: dict[str, str] = {"Message": message}
    if error_code is not None:
        body["ErrorCode"] = error_code
    headers = {":message-type": "exception", ":exception-type": kind, ":content-type": "application/json"}
    return EventMessage(headers=headers, payload=json.dumps(body).encode()).encode()


# -- in-process duplex transport ---------------------------------------------------------------------


@dataclass
class FakeStream:
    """SageMaker's side of one stream, as a ``behaviour`` sees it."""

    endpoint_name: str
    headers: dict[str, str]
    _parts: asyncio.Queue[ReceivedPart | None] = field(default_factory=asyncio.Queue)
    _out: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    received: list[ReceivedPart] = field(default_factory=list)
    input_ended: asyncio.Event = field(default_factory=asyncio.Event)

    async def next_part(self) -> ReceivedPart | None:
        """The next PayloadPart from the client; None once the client ended its direction."""
        return await self._parts.get()

    async def reply(
        self, data: bytes, data_type: str | None = None, completion_state: str | None = None
    ) -> None:
        await self._out.put(encode_payload_part(data, data_type, completion_state))

    async def reply_raw(self, event_bytes: bytes) -> None:
        await self._out.put(event_bytes)

    async def end(self) -> None:
        """End the response stream normally."""
        await self._out.put(None)


Behaviour = Callable[[FakeStream], Awaitable[None]]


async def echo_behaviour(stream: FakeStream) -> None:
    """Answers each part with the same bytes marked UTF8; ends when the client ends."""
    while (part := await stream.next_part()) is not None:
        await stream.reply(part.data, "UTF8")
    await stream.end()


class InProcessSageMaker:
    """A duplex HTTP client that plays SageMaker in-process for the real SDK client.

    Args:
        behaviour: What SageMaker (and the container behind it) does with the stream.
        secret_key: The secret the client signs with, to verify event signatures.
        status: HTTP status of the answer; not 200 → an error answer (``error_type`` and ``error_body``).
        respond: False never answers (for connect timeouts).
    """

    SUPPORTS_DUPLEX_STREAMING = True
    TIMEOUT_EXCEPTIONS: tuple[type[BaseException], ...] = ()

    def __init__(
        self,
        behaviour: Behaviour = echo_behaviour,
        *,
        secret_key: str = DUMMY_SECRET,
        status: int = 200,
        error_type: str | None = None,
        error_body: dict[str, Any] | None = None,
        respond: bool = True,
    ) -> None:
        self.behaviour = behaviour
        self.secret_key = secret_key
        self.status = status
        self.error_type = error_type
        self.error_body = error_body or {}
        self.respond = respond
        self.requests: list[Any] = []
        self.streams: list[FakeStream] = []
        self.readers: list[SignedEventReader] = []
        self.closed = False
        self._tasks: set[asyncio.Task[None]] = set()

    def __deepcopy__(self, memo: dict[int, Any]) -> InProcessSageMaker:
        return self

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def send(self, request: Any, *, request_config: Any = None) -> HTTPResponse:
        self.requests.append(request)
        if not self.respond:
            await asyncio.Event().wait()
        if self.status != 200:
            fields = Fields(
                [Field(name="x-amzn-errortype", values=[self.error_type or "InternalServerError"])]
            )
            return HTTPResponse(status=self.status, fields=fields, body=json.dumps(self.error_body).encode())
        match = BIDI_PATH.match(request.destination.path)
        assert match is not None, request.destination.path
        headers = {f.name.lower(): ",".join(f.values) for f in request.fields}
        stream = FakeStream(endpoint_name=match["name"], headers=headers)
        reader = SignedEventReader(headers["authorization"], self.secret_key)
        self.streams.append(stream)
        self.readers.append(reader)

        async def pump() -> None:
            async for chunk in request.body:
                for part in reader.feed(chunk):
                    if part is None:
                        stream.input_ended.set()
                        await stream._parts.put(None)
                        return
                    stream.received.append(part)
                    await stream._parts.put(part)
            # The body ended without the signed end frame.
            await stream._parts.put(None)

        self._spawn(pump())
        self._spawn(self.behaviour(stream))

        async def body() -> AsyncIterator[bytes]:
            while (item := await stream._out.get()) is not None:
                yield item

        fields = Fields(
            [
                Field(name="content-type", values=["application/vnd.amazon.eventstream"]),
                Field(name="x-amzn-invoked-production-variant", values=["AllTraffic"]),
            ]
        )
        return HTTPResponse(status=200, fields=fields, body=body())

    async def close(self) -> None:
        self.closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)


# -- ASGI app over HTTP/2 that forwards to a container's WebSocket ------------------------------------


def create_forwarding_app(ws_url: str, *, secret_key: str, stats: dict[str, Any] | None = None) -> Any:
    """An ASGI app playing SageMaker in front of a container at ``ws_url``.

    Args:
        ws_url: The container's ``ws://…/invocations-bidirectional-stream``.
        secret_key: The secret the client signs with (signatures are verified; a bad one ends the
            stream with an ``InternalStreamFailure``, as a stand-in for SageMaker's rejection).
        stats: Filled with what went through (``parts_in``, ``frames_out``, ``http_version``, ...).
            Setting ``drop_after`` = N aborts the HTTP/2 stream after N frames out (every stream, or
            only the first with ``drop_once``); ``drops`` counts the aborts.
    """
    import websockets

    stats = stats if stats is not None else {}
    stats.setdefault("parts_in", [])
    stats.setdefault("frames_out", 0)
    stats.setdefault("bad_signatures", 0)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        stats["http_version"] = scope.get("http_version")
        match = BIDI_PATH.match(scope["path"])
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if scope["method"] != "POST" or match is None:
            await _error(send, 404, "ValidationError", "unknown route")
            return
        stats["endpoint_name"] = match["name"]
        stats["target_variant"] = headers.get("x-amzn-sagemaker-target-variant")
        reader = SignedEventReader(headers["authorization"], secret_key)
        try:
            ws = await websockets.connect(ws_url, max_size=None, open_timeout=10)
        except Exception:
            await _error(
                send, 424, "ModelError", "the container refused the WebSocket", OriginalStatusCode=502
            )
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"application/vnd.amazon.eventstream"),
                    (b"x-amzn-invoked-production-variant", b"AllTraffic"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b"", "more_body": True})

        async def upstream() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    await ws.close()
                    return
                for part in reader.feed(message.get("body", b"")):
                    if part is None:  # the client ended its direction: SageMaker closes the container's
                        await ws.close()
                        return
                    if not part.signature_ok:
                        stats["bad_signatures"] += 1
                    stats["parts_in"].append(part)
                    # One PayloadPart, one WebSocket frame: UTF8 as text, anything else as binary.
                    await ws.send(part.data.decode() if part.data_type == "UTF8" else part.data)
                if not message.get("more_body", False):
                    await ws.close()
                    return

        up = asyncio.create_task(upstream())
        client_ended = asyncio.Event()
        up.add_done_callback(lambda _: client_ended.set())
        trailer: bytes | None = None
        try:
            async for frame in ws:
                if isinstance(frame, str):
                    event = encode_payload_part(frame.encode(), "UTF8")
                else:
                    event = encode_payload_part(frame, "BINARY")
                stats["frames_out"] += 1
                await send({"type": "http.response.body", "body": event, "more_body": True})
                if stats.get("drop_after") is not None and stats["frames_out"] >= stats["drop_after"]:
                    if stats.get("drop_once"):
                        stats["drop_after"] = None  # the next stream goes through
                    stats["drops"] = stats.get("drops", 0) + 1
                    raise ConnectionAbortedError("test: drop the stream")
        except websockets.ConnectionClosedError as exc:
            code = exc.rcvd.code if exc.rcvd is not None else 1006
            trailer = encode_exception(
                "ModelStreamError", "The container closed the stream.", f"WebSocket{code}"
            )
        finally:
            await ws.close()
        await send({"type": "http.response.body", "body": trailer or b"", "more_body": False})
        # Let the client end its direction (its signed end frame) before the stream goes away, as a
        # well-behaved HTTP/2 server does; bounded.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(client_ended.wait(), timeout=5.0)
        up.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await up

    return app


async def _error(send: Any, status: int, error_type: str, message: str, **extra: Any) -> None:
    body = json.dumps({"Message": message, "ErrorCode": error_type, **extra}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"x-amzn-errortype", error_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


@contextlib.contextmanager
def serve_tls(app: Any, certfile: str, keyfile: str, *, startup_timeout: float = 15.0) -> Iterator[int]:
    """Serve ``app`` with hypercorn (TLS, HTTP/2 via ALPN) on 127.0.0.1:<free port>, on a thread."""
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.certfile = certfile
    config.keyfile = keyfile
    config.alpn_protocols = ["h2"]
    config.graceful_timeout = 1.0
    # A connection left without streams (e.g. after a failed one) is cut soon: a dropped connection.
    config.keep_alive_timeout = 2.0
    config.loglevel = "WARNING"
    config.accesslog = None
    loop = asyncio.new_event_loop()
    server_errors: list[dict[str, Any]] = []

    def record(_: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        # hypercorn 0.18 drops a connection that sends DATA for a stream whose response already ended (a
        # KeyError in its h2 protocol) instead of ignoring it: our client's end frame after SageMaker
        # ended its direction triggers it. Recorded, not printed: the client is done by then.
        server_errors.append(context)

    loop.set_exception_handler(record)
    stop = asyncio.Event()
    started = threading.Event()
    errors: list[BaseException] = []

    async def main() -> None:
        task = asyncio.ensure_future(serve(app, config, shutdown_trigger=stop.wait))
        for _ in range(int(startup_timeout / 0.05)):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                await writer.wait_closed()
                break
            if task.done():
                break
            await asyncio.sleep(0.05)
        started.set()
        try:
            await task
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(
        target=loop.run_until_complete, args=(main(),), name=f"hypercorn-{port}", daemon=True
    )
    thread.start()
    if not started.wait(startup_timeout) or errors:
        raise RuntimeError(f"hypercorn did not start: {errors}")
    try:
        yield port
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        if not thread.is_alive():
            loop.close()
