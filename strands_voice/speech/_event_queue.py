"""The bounded event queue between a voice response and the one consumer that streams it (Leg 3)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.events import Event


class EventQueue:
    """A response's event queue, bounded for the producers that wait for room; one loop, one consumer.

    Producers (the agent's text, the TTS session's audio) await :meth:`wait_for_room` before adding an
    event (backpressure: they wait while ``maxsize`` events are queued). :meth:`put_nowait` itself never
    waits nor fails, so the few events that must not be held back (an error, ``interrupted``, the end
    marker ``None``) always get through, and a consumer that closes never finds a producer stuck on a put.

    It is the :class:`~strands_voice.speech._event_stream.Outlet` of a ``stream()`` run: events are delivered
    when the consumer takes them, not when they are queued.

    Args:
        maxsize: Events held before producers wait (at least 1).
    """

    delivers = False

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ConfigurationError("max_queued_events must be at least 1")
        self.maxsize = maxsize
        self._items: deque[Event | None] = deque()
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._held = False

    def __len__(self) -> int:
        return len(self._items)

    def put_nowait(self, item: Event | None) -> None:
        """Add an event (or the end marker ``None``) now."""
        self._items.append(item)
        if not self._held:
            self._readable.set()
        if len(self._items) >= self.maxsize:
            self._room.clear()

    async def wait_for_room(self) -> None:
        """Return once fewer than ``maxsize`` events are queued."""
        while len(self._items) >= self.maxsize:
            self._room.clear()
            await self._room.wait()

    def purge(self, drop: Callable[[Event], bool]) -> int:
        """Remove the queued events ``drop`` selects (barge-in: undelivered audio); returns how many."""
        kept = [item for item in self._items if item is None or not drop(item)]
        dropped = len(self._items) - len(kept)
        self._items = deque(kept)
        if len(self._items) < self.maxsize:
            self._room.set()
        return dropped

    def hold(self) -> None:
        """Deliver nothing until :meth:`release` (the response is paused); producers go on queueing."""
        self._held = True
        self._readable.clear()

    def release(self) -> None:
        """Deliver again."""
        self._held = False
        if self._items:
            self._readable.set()

    async def get(self) -> Event | None:
        """The next event, or ``None`` at the end (waits while held)."""
        while self._held or not self._items:
            self._readable.clear()
            await self._readable.wait()
        item = self._items.popleft()
        if len(self._items) < self.maxsize:
            self._room.set()
        return item
