"""A request travelling through a Leg 1 WebSocket session: its bounded audio queue and its state."""

from __future__ import annotations

import asyncio
from typing import Final

from strands_voice_protocol.frames import WordTiming

from kokoro_endpoint.engines.pipeline import RequestAudio
from kokoro_endpoint.scheduling.scheduler import SegmentStream
from kokoro_endpoint.serving.synthesis_job import SynthesisJob

__all__ = ["AUDIO_BUFFER_SEGMENTS", "DONE", "FAILED", "WAKE", "Marker", "Segment", "SessionRequest"]


class Marker:
    """An item of a request's audio queue that is not audio: the end, a failure, a wake-up."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


DONE: Final = Marker("done")
WAKE: Final = Marker("wake")
FAILED: Final = Marker("failed")

#: Synthesized segments (each one engine step, sent as one or more frames) a request may hold while its
#: audio waits to be sent: enough to keep the sender busy, few enough that a stalled client costs little.
AUDIO_BUFFER_SEGMENTS: Final = 3

# A segment's words (when asked; on the request's timeline) and its frames.
Segment = tuple[tuple[WordTiming, ...], list[bytes]]


class SessionRequest:
    """A request travelling through the session: its (bounded) audio queue and its state."""

    def __init__(self, job: SynthesisJob) -> None:
        self.job = job
        # One item per segment: the segment's words (when asked) and frames, or a marker.
        self.audio: asyncio.Queue[Segment | Marker] = asyncio.Queue(maxsize=AUDIO_BUFFER_SEGMENTS)
        self.cancelled = False
        self.holds_permit = False
        self.stream: SegmentStream[RequestAudio] | None = None  # while it is being synthesized

    def cancel(self) -> None:
        if not self.cancelled:
            self.cancelled = True
            if self.stream is not None:
                # Stops the engine's running step (an interruptible engine's at once): the session's
                # next request must not wait for audio nobody will hear.
                self.stream.close()
            # Drop the buffered audio (never sent now): this frees the memory, releases a producer
            # blocked on a full queue, and leaves room to wake a sender waiting for audio.
            while not self.audio.empty():
                self.audio.get_nowait()
            self.audio.put_nowait(WAKE)
