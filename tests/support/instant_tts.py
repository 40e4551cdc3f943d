"""An in-memory Leg 1 endpoint for fast tests: each ``synthesize`` is answered at once with silence.

Every request gets ``synthesis_start``, ``SECONDS_PER_REQUEST`` of pcm16 silence in one binary frame, and
``synthesis_complete``; ``close`` ends the session. With ``answer_first=N`` only the first N requests are
answered at once; the others are taken at once too, but their audio is still being made until ``release``
is set (an answer whose speech is still under way). ``cancel`` ends the held requests
(``synthesis_cancelled``); after ``close`` nothing but the client's disconnect is read, as an endpoint that
ignores a late ``cancel`` (or is slow to honour it) does: the held audio is still made, then the session
closes. The client must not wait for it after a barge-in.
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

#: Seconds between two looks at ``release`` (a thread's event: no thread is left waiting on it).
_RELEASE_POLL_S = 0.01


class InstantTTS:
    """A ``FrameTransport`` whose endpoint answers every request at once (see the module docstring)."""

    def __init__(self, answer_first: int | None = None, release: threading.Event | None = None) -> None:
        self.synthesized: list[str] = []
        self.sent_types: list[str] = []
        self._frames: asyncio.Queue[Frame | None] = asyncio.Queue()
        self._answer_first = answer_first
        self._release = release or threading.Event()
        self._held: list[str] = []  # request ids whose audio waits for release
        self._releasing: asyncio.Task[None] | None = None
        self._closing = False  # `close` was sent: only the disconnect is read now

    async def connect(self) -> None:
        return None

    async def send(self, message: str) -> None:
        frame = json.loads(message)
        kind = frame.get("type", "synthesize")
        self.sent_types.append(kind)
        if self._closing:
            return  # after `close`, a `cancel` changes nothing (see the module docstring)
        if kind == "synthesize":
            rid = frame.get("request_id", "r")
            self.synthesized.append(frame["text"])
            held_back = self._answer_first is not None and len(self.synthesized) > self._answer_first
            if held_back and not self._release.is_set():
                self._held.append(rid)  # the endpoint is still working on it
                if self._releasing is None or self._releasing.done():
                    self._releasing = asyncio.create_task(self._answer_held_once_released())
                return
            self._answer(rid)
        elif kind == "cancel":
            for rid in self._held:
                self._frames.put_nowait(json.dumps({"type": "synthesis_cancelled", "request_id": rid}))
            self._held.clear()
        elif kind == "close":
            self._closing = True
            if not self._held:
                self._frames.put_nowait(None)

    def _answer(self, rid: str) -> None:
        pcm = int(SECONDS_PER_REQUEST * BYTES_PER_SECOND)
        start = {"type": "synthesis_start", "request_id": rid, "format": "pcm16"}
        self._frames.put_nowait(json.dumps({**start, "sample_rate": 24000, "channels": 1}))
        self._frames.put_nowait(bytes(pcm))
        done = {"type": "synthesis_complete", "request_id": rid, "audio_bytes": pcm}
        timing = {"total_duration_s": SECONDS_PER_REQUEST, "elapsed_s": 0.0}
        self._frames.put_nowait(json.dumps({**done, **timing}))

    async def _answer_held_once_released(self) -> None:
        while not self._release.is_set():  # noqa: ASYNC110 (a thread's event: no async wakeup)
            await asyncio.sleep(_RELEASE_POLL_S)
        for rid in self._held:
            self._answer(rid)
        self._held.clear()
        if self._closing:
            self._frames.put_nowait(None)

    async def receive(self) -> Frame:
        frame = await self._frames.get()
        if frame is None:
            self._frames.put_nowait(None)
            raise EOFError
        return frame

    async def close(self) -> None:
        if self._releasing is not None:
            self._releasing.cancel()
        self._frames.put_nowait(None)
