"""The cascade's ears: a :class:`~strands_voice.listen.Listener` whose events become the caller's turns.

- ``SpeechStarted`` during an answer: a barge-in (the host cuts the answer).
- ``Transcript``: a user transcript (``role="user"``): partials as deltas where the engine gives them
  (only the part that extends what was already sent: a delta cannot take words back), the final text
  completes it and starts the host's answer. An empty final (a noise long enough to count as speech)
  starts nothing.
- ``TurnEnded``: its time is kept in the host's marks (the bench splits its latency with it).
- ``RecognitionFailed``: the turn is lost (the listener logged why); a transcript its partials began is
  closed, and nothing is answered.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Protocol

from strands.bidi.types.events import (
    BidiOutputEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)

from strands_voice.listen._events import RecognitionFailed, SpeechStarted, Transcript, TurnEnded
from strands_voice.listen._listener import Listener
from strands_voice.listen._recognizer import Recognizer
from strands_voice.listen._settings import ListenSettings
from strands_voice.listen._vad import Vad

__all__ = ["Hearing"]

logger = logging.getLogger(__name__)


class Host(Protocol):
    """What the ears need from the cascade.

    Attributes:
        recognizer: The speech recognizer.
        marks: The latest answer's milestones (``turn_end``, ``transcript``: ``time.perf_counter()``).
    """

    recognizer: Recognizer
    marks: dict[str, float]

    def emit(self, event: BidiOutputEvent, /) -> None:
        """Queue an event for ``receive()``."""

    def barge_in(self) -> None:
        """The caller started speaking: cut the answer in progress, if any."""

    async def user_turn(self, text: str) -> None:
        """The caller's turn was recognized: answer it."""


class Hearing:
    """Runs a :class:`Listener` for a host (see the module docstring).

    Args:
        host: The cascade.
        settings: The listener's settings.
        vad: The VAD (None: Silero).
    """

    def __init__(self, host: Host, settings: ListenSettings, vad: Vad | None) -> None:
        self._host = host
        self.listener = Listener(settings, vad=vad, recognizer=host.recognizer)
        self._content_id: str | None = None
        self._sent = ""

    async def feed(self, pcm16: bytes) -> None:
        """Caller audio in (16 kHz PCM16)."""
        await self.listener.feed(pcm16)

    async def aclose(self) -> None:
        """Stop listening (an open turn is dropped)."""
        await self.listener.aclose()

    async def run(self) -> None:
        """Turn the listener's events into transcripts, barge-ins and answers, until closed."""
        async for event in self.listener.events():
            if isinstance(event, SpeechStarted):
                self._host.barge_in()
            elif isinstance(event, TurnEnded):
                self._host.marks["turn_end"] = time.perf_counter()
            elif isinstance(event, Transcript):
                await self._transcript(event)
            elif isinstance(event, RecognitionFailed):
                self._close_transcript()

    async def _transcript(self, event: Transcript) -> None:
        text = event.text.strip()
        if event.final:
            self._host.marks["transcript"] = time.perf_counter()
        if text:
            self._extend(text)
        if not event.final:
            return
        if self._content_id is not None and text and not text.startswith(self._sent):
            logger.debug("the final text revises the partials; the transcript keeps the partials")
        self._close_transcript()
        if text:
            await self._host.user_turn(text)

    def _close_transcript(self) -> None:
        """End the turn's transcript (if its words began one)."""
        if self._content_id is not None:
            self._host.emit(BidiTranscriptStopEvent("user", self._content_id))
        self._content_id, self._sent = None, ""

    def _extend(self, text: str) -> None:
        """Send the part of ``text`` that extends what this turn's transcript already holds."""
        if self._content_id is None:
            self._content_id = f"user-{uuid.uuid4().hex[:12]}"
            self._host.emit(BidiTranscriptStartEvent("user", self._content_id))
        if text.startswith(self._sent) and len(text) > len(self._sent):
            self._host.emit(BidiTranscriptDeltaEvent(text[len(self._sent) :], "user", self._content_id))
            self._sent = text
