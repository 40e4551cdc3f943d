"""A refusal the client can read: answer an oversized request body, then discard the rest of it.

A server that answers 413 and closes while the client is still sending makes the client's kernel see a
reset: an ordinary client (``urllib``, ``requests``, ``curl``) that sends the whole body before it reads
reports a broken pipe and never sees the answer. So the answer goes out first, then the rest of the body
is read and thrown away, chunk by chunk, never held, within a bound of bytes and seconds; only then does
the response end (and the connection close). A body declared larger than the bound, or one that takes
longer, is cut off as before: the bound is what a refusal may cost the server.

Plain ASGI (no framework): the endpoint and the example app wrap their 413 responses in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

__all__ = ["MAX_DRAIN_BYTES", "MAX_DRAIN_S", "respond_then_drain"]

logger = logging.getLogger(__name__)

#: The most body bytes discarded after a refusal (a 64 MB upload is read to its end; more is cut off).
MAX_DRAIN_BYTES: Final = 128 * 1024 * 1024
#: The longest a refusal waits for the rest of the body.
MAX_DRAIN_S: Final = 10.0

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def _header(scope: Message, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip().lower()
    return ""


def _worth_draining(scope: Message, max_bytes: int) -> bool:
    """Whether the rest of the body will come and fits the bound: a client waiting for ``100 Continue``
    sends nothing after a refusal, and a body declared over the bound is not waited for."""
    if _header(scope, b"expect") == "100-continue":
        return False
    declared = _header(scope, b"content-length")
    return not (declared.isdigit() and int(declared) > max_bytes)


async def _discard(receive: Receive, max_bytes: int) -> int:
    """Read and drop body chunks until the body ends, the client leaves or ``max_bytes`` passed."""
    drained = 0
    while drained <= max_bytes:
        message = await receive()
        if message.get("type") != "http.request":
            break
        drained += len(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return drained


async def respond_then_drain(
    respond: Callable[[Send], Awaitable[None]],
    scope: Message,
    receive: Receive,
    send: Send,
    *,
    max_bytes: int = MAX_DRAIN_BYTES,
    max_s: float = MAX_DRAIN_S,
) -> None:
    """Send the answer ``respond`` writes, except its end; discard the rest of the request body (bounded);
    then end the response.

    Args:
        respond: Writes the whole answer to the ``send`` it is given (e.g. a Starlette response).
        scope: The request's ASGI scope (its headers say whether the rest of the body will come).
        receive: The request's ``receive``.
        send: The server's ``send``.
        max_bytes: The most bytes discarded.
        max_s: The longest wait for the rest of the body.
    """

    async def holding_send(message: Message) -> None:
        if message.get("type") == "http.response.body" and not message.get("more_body", False):
            message = {**message, "more_body": True}
            if not message.get("body"):
                return
        await send(message)

    await respond(holding_send)
    if _worth_draining(scope, max_bytes):
        drained = 0
        with contextlib.suppress(TimeoutError):
            drained = await asyncio.wait_for(_discard(receive, max_bytes), max_s)
        logger.debug("drained=<%d> | rest of a refused body discarded", drained)
    await send({"type": "http.response.body", "body": b"", "more_body": False})
