"""The speakers' bounded buffer of pcm16 audio (sans-I/O: no device, no clock, counted in bytes).

The handler's thread pushes audio as it arrives; the sound card's thread pulls exactly what it plays,
silence where nothing is queued. :meth:`PlaybackBuffer.clear` drops everything at once (barge-in).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

__all__ = ["PlaybackBuffer", "PulledAudio"]


@dataclass(frozen=True, slots=True)
class PulledAudio:
    """What the device plays next.

    Attributes:
        data: Exactly the bytes asked for: the queued audio, then silence.
        audio_bytes: How many of them were queued audio (the rest is silence).
    """

    data: bytes
    audio_bytes: int


class PlaybackBuffer:
    """Queued pcm16 audio, at most ``capacity`` bytes.

    Args:
        capacity: The most bytes held (a push that would exceed it is refused whole).
        frame_bytes: Bytes per frame (2 x channels): pushes and pulls keep whole frames.

    Raises:
        ValueError: ``capacity`` is smaller than one frame, or ``frame_bytes`` is not positive.
    """

    def __init__(self, capacity: int, frame_bytes: int = 2) -> None:
        if frame_bytes <= 0 or capacity < frame_bytes:
            raise ValueError("capacity must hold at least one frame")
        self.capacity = capacity
        self.frame_bytes = frame_bytes
        self._chunks: deque[bytes] = deque()
        self._head = 0  # bytes of the first chunk already pulled
        self._queued = 0
        self._odd = b""  # a partial frame kept until the rest of it arrives

    @property
    def queued(self) -> int:
        """Bytes waiting to be played."""
        return self._queued

    def room_for(self, size: int) -> bool:
        """Whether a push of ``size`` bytes fits now (a push larger than the capacity fits only alone)."""
        return self._queued == 0 or self._queued + size <= self.capacity

    def push(self, data: bytes) -> bool:
        """Queue ``data`` if it fits (see :meth:`room_for`); returns whether it was queued."""
        data = self._odd + data
        whole = len(data) - len(data) % self.frame_bytes
        if not self.room_for(whole):
            self._odd = b""
            return False
        self._odd = data[whole:]
        if whole:
            self._chunks.append(data[:whole])
            self._queued += whole
        return True

    def pull(self, size: int) -> PulledAudio:
        """The next ``size`` bytes to play: queued audio first, silence after it."""
        out = bytearray()
        while self._chunks and len(out) < size:
            chunk = self._chunks[0]
            take = min(size - len(out), len(chunk) - self._head)
            out += chunk[self._head : self._head + take]
            self._head += take
            if self._head == len(chunk):
                self._chunks.popleft()
                self._head = 0
        audio = len(out)
        self._queued -= audio
        out += bytes(size - audio)
        return PulledAudio(bytes(out), audio)

    def clear(self) -> int:
        """Drop every queued byte at once; returns how many were dropped."""
        dropped = self._queued
        self._chunks.clear()
        self._head = 0
        self._queued = 0
        self._odd = b""
        return dropped
