"""Two WebSocket connections joined frame by frame, each direction a tracked task; closes carried across.

:func:`relay` is the phone bridge's core (Twilio's socket on one side, the signed runtime socket on the
other). Text stays text and binary stays binary, in order. When one side closes, the other is closed with
the same code and reason (a close without a code, or a dropped connection, is carried as 1000 or 1011), the
other direction's task is cancelled with a bound, and the relay returns. Nothing outlives the call.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from strands_voice_protocol.aio.tasks import cancel_and_wait

__all__ = ["relay", "relayed_close"]

logger = logging.getLogger(__name__)

#: Codes a peer may receive but no endpoint may send (RFC 6455 7.4.1).
_UNSENDABLE: Final = {1005, 1006, 1015}


def relayed_close(code: int | None, reason: str | None, *, clean: bool) -> tuple[int, str]:
    """The close to send on, given the one received: the same code, or 1000 (a clean close without one) or
    1011 (no close frame: the connection dropped)."""
    if code is not None and code not in _UNSENDABLE:
        return code, reason or ""
    return (1000, reason or "") if clean else (1011, "the other side of the relay went away")


def _close_of(closed: Any) -> tuple[int, str]:
    received = closed.rcvd
    code, reason = (received.code, received.reason) if received is not None else (None, None)
    return relayed_close(code, reason, clean=received is not None)


async def _pump(source: Any, sink: Any, name: str) -> tuple[Any, int, str]:
    """Forward ``source``'s messages to ``sink`` until either closes: the one still to close, and how."""
    from websockets.exceptions import ConnectionClosed

    while True:
        try:
            message = await source.recv()
        except ConnectionClosed as closed:
            logger.debug("direction=<%s> | relay source closed", name)
            return sink, *_close_of(closed)
        try:
            await sink.send(message)
        except ConnectionClosed as closed:
            logger.debug("direction=<%s> | relay sink closed", name)
            return source, *_close_of(closed)


async def relay(
    first: Any, second: Any, *, grace_s: float = 5.0, names: tuple[str, str] = ("a", "b")
) -> None:
    """Carry frames both ways between two open ``websockets`` connections until either closes.

    Args:
        first: One connection.
        second: The other.
        grace_s: How long the other direction and the closing handshake may take once one side closed.
        names: The two sides, for the logs.
    """
    tasks = [
        asyncio.create_task(_pump(first, second, f"{names[0]}->{names[1]}"), name=f"relay-{names[0]}"),
        asyncio.create_task(_pump(second, first, f"{names[1]}->{names[0]}"), name=f"relay-{names[1]}"),
    ]
    try:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        other, code, reason = next(iter(done)).result()
        await asyncio.wait_for(other.close(code, reason), grace_s)
    except TimeoutError:
        logger.debug("relay close did not finish within %.1f s", grace_s)
    finally:
        await cancel_and_wait(tasks, grace_s)
