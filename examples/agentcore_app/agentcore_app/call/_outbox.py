"""The one queue of a call's frames to the caller, in order, with room for the urgent.

Audio (bytes) and events (JSON text) wait their turn in order; an urgent event (``speech_paused``: the
player must stop now) goes before whatever waits. :meth:`Outbox.put` waits while ``maxsize`` frames wait
(backpressure on the answer); :meth:`Outbox.put_urgent` never waits. :meth:`Outbox.drop_audio` removes the
audio not yet sent (a barge-in: it will never be heard), keeping the events.
"""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["Frame", "Outbox"]

#: A frame out: audio bytes, JSON text, or None (the end: the writer stops).
Frame = str | bytes | None


class Outbox:
    """A bounded FIFO of a call's frames with a front door (see the module docstring)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._frames: deque[Frame] = deque()
        self._ready = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    def _changed(self) -> None:
        if self._frames:
            self._ready.set()
        if len(self._frames) < self.maxsize:
            self._room.set()
        else:
            self._room.clear()

    async def put(self, frame: Frame) -> None:
        """Add ``frame`` last, once fewer than ``maxsize`` frames wait."""
        while len(self._frames) >= self.maxsize:
            self._room.clear()
            await self._room.wait()
        self._frames.append(frame)
        self._changed()

    def put_urgent(self, frame: str) -> None:
        """Add ``frame`` first (never waits)."""
        self._frames.appendleft(frame)
        self._changed()

    def drop_audio(self) -> int:
        """Remove the audio that waits; returns how many frames."""
        kept: deque[Frame] = deque(frame for frame in self._frames if not isinstance(frame, bytes))
        dropped = len(self._frames) - len(kept)
        self._frames = kept
        self._changed()
        return dropped

    async def get(self) -> Frame:
        """The next frame (waits for one)."""
        while not self._frames:
            self._ready.clear()
            await self._ready.wait()
        frame = self._frames.popleft()
        self._changed()
        return frame
