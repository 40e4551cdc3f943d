"""An in-memory Leg 1 endpoint for fast tests: each ``synthesize`` is answered at once with silence.

Every request gets ``synthesis_start``, ``SECONDS_PER_REQUEST`` of pcm16 silence in one binary frame, and
``synthesis_complete``; ``close`` ends the session. With ``answer_first=N`` only the first N requests are
answered at once, the others once ``release`` is set (an answer whose audio is still being made).
It speaks the wire contract, not Kokoro: tests about the agent side (barge-in, conversations) use it to
stay fast and deterministic.
"""

from __future__ import annotations

import asyncio
import json
import threading

from strands_voice_protocol.audio import BYTES_PER_SECOND

from strands_voice.transports._base import Frame

#: Seconds of audio each synthesize request gets.
SECONDS_PER_REQUEST = 0.5


class InstantTTS:
    """A ``FrameTransport`` whose endpoint answers every request at once (see the module docstring)."""

    def __init__(self, answer_first: int | None = None, release: threading.Event | None = None) -> None:
        self.synthesized: list[str] = []
        self.sent_types: list[str] = []
        self._frames: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._answer_first = answer_first
        self._release = release or threading.Event()

    async def connect(self) -> None:
        return None

    async def send(self, message: str) -> None:
        frame = json.loads(message)
        kind = frame.get("type", "synthesize")
        self.sent_types.append(kind)
        if kind == "synthesize":
            rid = frame.get("request_id", "r")
            self.synthesized.append(frame["text"])
            if self._answer_first is not None and len(self.synthesized) > self._answer_first:
                # Held back: the endpoint is still working (a thread's event, so wait on a thread).
                await asyncio.to_thread(self._release.wait, 60.0)
            pcm = int(SECONDS_PER_REQUEST * BYTES_PER_SECOND)
            start = {"type": "synthesis_start", "request_id": rid, "format": "pcm16"}
            self._frames.put_nowait(json.dumps({**start, "sample_rate": 24000, "channels": 1}))
            self._frames.put_nowait(bytes(pcm))
            done = {"type": "synthesis_complete", "request_id": rid, "audio_bytes": pcm}
            timing = {"total_duration_s": SECONDS_PER_REQUEST, "elapsed_s": 0.0}
            self._frames.put_nowait(json.dumps({**done, **timing}))
        elif kind == "close":
            self._frames.put_nowait(None)

    async def receive(self) -> Frame:
        frame = await self._frames.get()
        if frame is None:
            self._frames.put_nowait(None)
            raise EOFError
        return frame

    async def close(self) -> None:
        self._frames.put_nowait(None)
