"""How the app answers over HTTP, on bedrock-agentcore's public API only.

- :func:`sse_frames`: the Leg 3 events as SSE bytes; an event whose text UTF-8 cannot carry becomes one
  clear ``error`` event and the stream goes on.
- :class:`StoppingStreamingResponse`: the SSE response, which stops the answer when the caller has gone
  and always closes it. The entrypoint returns it: ``BedrockAgentCoreApp`` passes a returned Starlette
  ``Response`` through unchanged.
- :class:`JsonBodyGuard`: an ASGI middleware (``BedrockAgentCoreApp(middleware=...)``) that bounds every
  ``POST`` body (413, before it is read whole; the rest is discarded, bounded, so the client reads the
  answer) and answers a ``POST /invocations`` that is not
  ``application/json`` (415: a cross-site form can post only ``text/plain`` or form types) or not JSON
  (400) with one Leg 3 ``error`` event, where the base class would echo the parser's exception text (or
  answer 500 on JSON nested too deep).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Final

import anyio
from starlette.datastructures import Headers
from starlette.responses import JSONResponse, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from strands_voice_protocol.aio.drain import respond_then_drain
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import TextEncodingError
from strands_voice_protocol.events import ErrorEvent, Event, EventBuilder
from strands_voice_protocol.sse import encode_sse

__all__ = ["MAX_BODY_BYTES", "JsonBodyGuard", "StoppingStreamingResponse", "error_event", "sse_frames"]

logger = logging.getLogger(__name__)

#: Seconds the answer's tasks get to stop (and its TTS session to close) once the caller has gone.
STOP_TIMEOUT_S: Final = 10.0

#: The one route whose body must be JSON.
_INVOCATIONS_PATH: Final = "/invocations"

#: The largest ``POST`` body read (``create_app(max_body_bytes=...)``): a prompt of the most characters,
#: every one escaped, and a lexicon fit in it several times over.
MAX_BODY_BYTES: Final = 256 * 1024

#: Sent with a refusal whose body was not read: the server closes the connection instead of reading (and
#: dropping) the rest, which may be gigabytes.
_CLOSE: Final = {"Connection": "close"}


def error_event(code: str, message: str) -> ErrorEvent:
    """A Leg 3 ``error`` event for an invocation refused before it started (``t_ms`` 0)."""
    # A stopped clock: the refusal is the answer's first and only moment, so t_ms is exactly 0 (a running
    # clock stamped 0.1 ms whenever the builder's two readings fell a tenth of a millisecond apart).
    return EventBuilder(clock=lambda: 0.0).error(code=code, message=message)


def _frame(event: Event) -> bytes:
    try:
        return encode_sse(event)
    except TextEncodingError as error:
        # A lone surrogate (a broken model stream) cannot go out as UTF-8: the caller gets one clear error
        # event instead of losing the rest of the answer.
        logger.warning("field=<%s> | event not sent: text UTF-8 cannot carry", error.field)
        message = f"A {event.get('type', 'stream')} event was dropped: its text is not valid Unicode."
        return encode_sse(error_event("agent_error", message))


async def sse_frames(events: AsyncGenerator[Event, None]) -> AsyncGenerator[bytes, None]:
    """The answer's events as SSE frames; closing this generator closes ``events``.

    Args:
        events: The answer; it is closed with this generator, and with it the handler's stream, its
            tasks and its TTS session.

    Yields:
        One ``data: {json}\\n\\n`` frame per event; an ``internal`` error event if ``events`` raises.
    """
    async with contextlib.aclosing(events):
        try:
            async for event in events:
                yield _frame(event)
        except Exception:
            logger.exception("the answer's stream failed")
            message = "the agent could not finish its answer; try again"
            yield encode_sse(EventBuilder().error(code="internal", message=message))


class StoppingStreamingResponse(StreamingResponse):
    """An SSE response that stops its body when the caller disconnects, and always closes it.

    Starlette's own response cancels the sending through an anyio cancel scope and then drops the body:
    a generator left suspended is never closed (the answer's tasks and TTS session live on until garbage
    collection, if ever), and one caught mid-``await`` is cancelled again at every ``await`` of its
    cleanup. Here the sending runs in a task that a disconnect cancels once (plain asyncio, so ``finally``
    blocks can await their cleanup), and the body is closed afterwards whatever happened.

    Args:
        content: The SSE frames (:func:`sse_frames`).
        on_disconnect: Called once, first, when the caller has gone mid-answer (the app's barge-in).
    """

    def __init__(
        self, content: AsyncGenerator[bytes, None], *, on_disconnect: Callable[[], object] | None = None
    ) -> None:
        super().__init__(content, media_type="text/event-stream")
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streaming = asyncio.create_task(self.stream_response(send), name="sse-stream")
        watching = asyncio.create_task(self.listen_for_disconnect(receive), name="sse-disconnect")
        try:
            await asyncio.wait({streaming, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Shielded: an outer cancellation (server shutdown) must not cut the cleanup short.
            with anyio.CancelScope(shield=True):
                await self._stop(streaming, watching)
        error = streaming.exception() if streaming.done() and not streaming.cancelled() else None
        if isinstance(error, OSError):  # the caller went away mid-send
            logger.debug("error=<%s> | the caller went away mid-send", type(error).__name__)
        elif isinstance(error, BaseException):
            raise error
        if self.background is not None:
            await self.background()

    async def _stop(self, streaming: asyncio.Task[None], watching: asyncio.Task[None]) -> None:
        sent_all = streaming.done() and not streaming.cancelled() and streaming.exception() is None
        if not sent_all:
            logger.debug("the caller disconnected; stopping the answer")
            if self.on_disconnect is not None:
                # Before anything is cancelled, so the TTS endpoint gets the barge-in's Leg 1 cancel.
                self.on_disconnect()
        await cancel_and_wait([streaming, watching], STOP_TIMEOUT_S)
        body = self.body_iterator
        if streaming.done() and isinstance(body, AsyncGenerator):
            # The body may sit at a yield (the send was what got cancelled): close it, and with it the
            # chain below it (sse_frames closes the answer's generator).
            with anyio.move_on_after(STOP_TIMEOUT_S):
                await body.aclose()


class _CallerLeft(Exception):
    """The caller disconnected before its body was read."""


class JsonBodyGuard:
    """ASGI middleware over the app's ``POST`` routes (see the module docstring).

    - Any ``POST`` body over ``max_body_bytes``: 413 ``invalid_request``, refused on its declared
      ``Content-Length`` before a byte is read, or once a chunked body passes the bound.
    - ``POST /invocations`` whose ``Content-Type`` is not ``application/json``: 415 ``invalid_request``.
    - ``POST /invocations`` whose body is not JSON: 400 ``invalid_json``.

    The body is read once here and handed on unchanged, so the app parses the same bytes.

    Args:
        app: The app behind the guard.
        max_body_bytes: The largest body read.
    """

    def __init__(self, app: ASGIApp, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        invocation = scope["path"] == _INVOCATIONS_PATH
        media_type = headers.get("content-type", "").partition(";")[0].strip().lower()
        if invocation and media_type != "application/json":
            message = "the request body must be JSON, sent as Content-Type: application/json"
            await _refuse(415, "invalid_request", message, _CLOSE)(scope, receive, send)
            return
        try:
            body = await self._body(receive)
        except _CallerLeft:
            return
        if body is None:
            await self._too_large(scope, receive, send)
            return
        if invocation:
            try:
                json.loads(body)  # as Starlette's Request.json() does
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                # RecursionError: deeply nested JSON; still the caller's bad input, not a server fault.
                message = "the request body must be a JSON object"
                await _refuse(400, "invalid_json", message)(scope, receive, send)
                return
        await self.app(scope, _replaying(body, receive), send)

    async def _body(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it passes ``max_body_bytes``.

        Raises:
            _CallerLeft: the caller left before sending it all.
        """
        body = bytearray()
        more_body = True
        while more_body:
            message = await receive()
            if message["type"] != "http.request":
                raise _CallerLeft
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                return None
            more_body = message.get("more_body", False)
        return bytes(body)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        """413, then the rest of the body discarded (bounded) before the connection closes, so a client
        that sends it all before reading reads the answer (:mod:`strands_voice_protocol.aio.drain`)."""
        message = f"the request body is larger than {self.max_body_bytes} bytes"
        refusal = _refuse(413, "invalid_request", message, _CLOSE)

        async def respond(inner_send: Send) -> None:
            await refusal(scope, receive, inner_send)

        await respond_then_drain(respond, scope, receive, send)


def _refuse(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """One Leg 3 ``error`` event as the whole answer (the protocol's bad-payload rule)."""
    return JSONResponse(error_event(code, message), status, headers=headers)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands on ``body`` first, then what the caller sends next (a disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
