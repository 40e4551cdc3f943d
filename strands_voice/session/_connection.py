"""The driver's transport chores: connect within a timeout as a typed error, wait for a frame or a wakeup,
stop a pending receive, close without raising."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from strands_voice_protocol.errors import TTSConnectionError, TTSError, TTSTimeoutError

from strands_voice.transports import Frame, FrameTransport

logger = logging.getLogger(__name__)


async def connect_within(transport: FrameTransport, timeout_s: float) -> None:
    """Connect ``transport``; a timeout or an OS error becomes a retryable typed error.

    Raises:
        TTSTimeoutError: ``connect_timeout``, retryable.
        TTSConnectionError: ``connection_failed`` (retryable for an OS error), or the transport's own.
    """
    try:
        async with asyncio.timeout(timeout_s):
            await transport.connect()
    except TimeoutError:
        raise TTSTimeoutError(
            "connect_timeout", f"could not connect to the TTS endpoint within {timeout_s} s", retryable=True
        ) from None
    except TTSError:
        raise
    except OSError:
        logger.debug("could not connect", exc_info=True)
        raise TTSConnectionError(
            "connection_failed", "could not connect to the TTS endpoint", retryable=True
        ) from None


async def drop_receive(receiving: asyncio.Future[Frame] | None) -> None:
    """Cancel a pending receive, bounded (a transport that ignores cancellation must not hang us)."""
    if receiving is None:
        return
    if not receiving.done():
        receiving.cancel()
        await asyncio.wait({receiving}, timeout=1.0)
    elif not receiving.cancelled():
        receiving.exception()  # retrieved, so asyncio does not log "never retrieved"


async def close_quietly(transport: FrameTransport) -> None:
    """Close ``transport``; a failure is logged, never raised."""
    try:
        await transport.close()
    except Exception:
        logger.debug("transport close failed", exc_info=True)


class Wakeup:
    """Wakes the one task waiting for a frame when the state changed under it (a request, finish, close)."""

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None

    def wake(self) -> None:
        """Wake the waiting task, if one waits."""
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    async def wait(
        self, limit_s: float | None, receiving: asyncio.Future[Frame] | None
    ) -> set[asyncio.Future[Any]]:
        """Wait for ``receiving``, a wakeup or ``limit_s``; what is done (empty: the time ran out)."""
        self._future = asyncio.get_running_loop().create_future()
        waiting: set[asyncio.Future[Any]] = {self._future}
        if receiving is not None:
            waiting.add(receiving)
        try:
            done, _ = await asyncio.wait(waiting, timeout=limit_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._future.cancel()
            self._future = None
        return done
