"""The voice handler's one stream of events out, and the views that read it.

Every event a :class:`~strands_voice.VoiceCallbackHandler` produces leaves through
:meth:`EventHub.publish`, once, in order. The ways to read it are views of that one stream:

- ``on_audio(bytes)`` and ``on_event(event)``: callbacks, called where the event is published (a
  response's worker thread; under ``stream()`` the caller's loop, as the event is yielded);
- :class:`EventStream` (``handler.events()``): an async iterator on the loop that subscribed;
- ``handler.stream()``: the pull form of one agent run: its events are held in a bounded
  :class:`~strands_voice.speech.EventQueue` for its consumer (backpressure) and published as they
  are yielded, so the callbacks and ``events()`` see them too.

A response hands its events to an :class:`Outlet`: the hub itself (published at once: handing over IS
delivery) or a ``stream()`` run's queue.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import threading
from collections.abc import Callable
from typing import Protocol

from strands_voice_protocol.events import Event

logger = logging.getLogger(__name__)


class Outlet(Protocol):
    """Where a response hands its events (on the response's loop).

    Attributes:
        delivers: Handing an event over delivers it to the caller (the hub), rather than queueing it
            for a consumer who reports each delivery.
    """

    delivers: bool

    def put_nowait(self, item: Event, /) -> None:
        """Take one event now (never waits)."""

    async def wait_for_room(self) -> None:
        """Return once the consumer has room for more (backpressure)."""

    def purge(self, drop: Callable[[Event], bool]) -> int:
        """Drop the held events ``drop`` selects (barge-in); returns how many."""

    def hold(self) -> None:
        """Deliver nothing more until :meth:`release` (the response is paused)."""

    def release(self) -> None:
        """Deliver again, what was held first."""


class Callbacks(Protocol):
    """Who holds the callback views (the handler: its ``on_audio`` and ``on_event`` may be set any time).

    Attributes:
        on_audio: Called with each ``audio_chunk``'s decoded audio, in order.
        on_event: Called with every event.
    """

    on_audio: Callable[[bytes], None] | None
    on_event: Callable[[Event], None] | None


class EventHub:
    """The one stream: the callbacks and subscribed :class:`EventStream` views, fed by :meth:`publish`.

    Thread-safe: responses publish from their worker threads, views subscribe from any loop.

    Args:
        callbacks: Holds ``on_audio`` and ``on_event``, read at each event.
    """

    delivers = True

    def __init__(self, callbacks: Callbacks) -> None:
        self._callbacks = callbacks
        self._lock = threading.Lock()
        self._streams: list[EventStream] = []
        self._held: list[Event] | None = None  # a paused response's events, until released

    def publish(self, event: Event) -> None:
        """Hand ``event`` to the callbacks and every subscribed stream (a failing callback is logged)."""
        with self._lock:
            if self._held is not None:
                self._held.append(event)
                return
        self._publish(event)

    def _publish(self, event: Event) -> None:
        on_audio, on_event = self._callbacks.on_audio, self._callbacks.on_event
        if on_audio is not None and event["type"] == "audio_chunk":
            try:
                on_audio(base64.b64decode(event["data"]))
            except Exception:
                logger.exception("on_audio callback failed")
        if on_event is not None:
            try:
                on_event(event)
            except Exception:
                logger.exception("on_event callback failed")
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.put(event)

    # The Outlet of responses run by the Strands callback: published at once, unless held.
    put_nowait = publish

    async def wait_for_room(self) -> None:
        """The hub never makes a producer wait."""

    def purge(self, drop: Callable[[Event], bool]) -> int:
        """Drop the held events ``drop`` selects; returns how many."""
        with self._lock:
            if self._held is None:
                return 0
            kept = [event for event in self._held if not drop(event)]
            dropped, self._held = len(self._held) - len(kept), kept
        return dropped

    def hold(self) -> None:
        """Publish nothing until :meth:`release` (a paused response)."""
        with self._lock:
            if self._held is None:
                self._held = []

    def release(self) -> None:
        """Publish what was held, in order, then publish at once again."""
        with self._lock:
            held, self._held = self._held or [], None
        for event in held:
            self._publish(event)

    def subscribe(self, *, until_audio_end: bool) -> EventStream:
        """A new :class:`EventStream` on the calling loop (call from a coroutine)."""
        stream = EventStream(self, until_audio_end=until_audio_end)
        with self._lock:
            self._streams.append(stream)
        return stream

    def unsubscribe(self, stream: EventStream) -> None:
        """Stop handing events to ``stream`` (idempotent)."""
        with self._lock:
            if stream in self._streams:
                self._streams.remove(stream)

    def end(self) -> None:
        """End every subscribed stream (the handler is closed)."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            stream.put(None)


class EventStream:
    """An async iterator of the hub's events on the loop that created it.

    Subscribed as soon as it is created (so nothing is missed between creating it and iterating).
    It ends when the handler is closed, or after the next ``audio_end`` when ``until_audio_end``.
    """

    def __init__(self, hub: EventHub, *, until_audio_end: bool) -> None:
        self._hub = hub
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._until_audio_end = until_audio_end
        self._ended = False

    def put(self, event: Event | None) -> None:
        """Queue ``event`` (None: the end) for the consumer; called from any thread."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except RuntimeError:  # the consumer's loop is closed: nobody listens any more
            self._hub.unsubscribe(self)

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> Event:
        if self._ended:
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None or (self._until_audio_end and event["type"] == "audio_end"):
            self.close()
            if event is None:
                raise StopAsyncIteration
        return event

    def close(self) -> None:
        """Stop receiving events."""
        self._ended = True
        self._hub.unsubscribe(self)
