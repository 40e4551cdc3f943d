"""One answer's speech delivered close to real time, as ``strands.bidi`` events.

Each ``audio_chunk`` of the response is cut into short slices and a slice is emitted only while what was
emitted runs at most ``lead_s`` ahead of what the caller has played (the response's playback count, paced
by :func:`~strands_voice.speech.within_lead`). ``BidiAgent``'s player knows no pause, so this is what makes
a pause stop the sound at once: a paused response plays nothing more, and its player runs dry within the
lead; a resumed one goes on from the next sample. Nothing is repeated or lost.

- ``audio_chunk`` (pcm16, 24 kHz) -> ``BidiAudioDeltaEvent`` (between ``BidiAudioStart/StopEvent``);
- ``interrupted`` -> the transcripts closed with what the caller HEARD (its ``heard_text``), the audio
  stopped; ``audio_end`` -> the audio stopped.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
from collections.abc import Callable
from typing import Final

from strands.bidi.types.events import BidiAudioDeltaEvent, BidiAudioStartEvent, BidiAudioStopEvent
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import Event
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice.cascade._answer_parts import AnswerParts
from strands_voice.cascade._held import HeldOutlet
from strands_voice.speech import EventQueue, Response, within_lead

__all__ = ["AudioDelivery"]

logger = logging.getLogger(__name__)

#: The longest slice of audio emitted at once (40 ms of pcm16 at 24 kHz).
_SLICE_BYTES: Final = 2 * SAMPLE_RATE // 25
#: The longest wait before the playback count is looked at again: the slices are short and the player is
#: local, so a fine poll keeps its buffer within the lead (the app's call, over a network, polls coarser).
_PACE_POLL_S: Final = 0.02


class AudioDelivery:
    """The response's events delivered in order (see the module docstring).

    Args:
        parts: The answer's ids, lead, marks and ``on_speaking``.
        response: The voice pipeline (its playback count; told of each event delivered).
        queue: The response's outlet (None ends the delivery).
        emit: The answer's outlet (a held answer's delivery starts once it is released).
        interrupted: Whether the answer was cut (nothing more is emitted).
        close_blocks: Ends the answer's transcripts with what the caller heard.
    """

    def __init__(
        self,
        parts: AnswerParts,
        response: Response,
        queue: EventQueue,
        emit: HeldOutlet,
        *,
        interrupted: Callable[[], bool],
        close_blocks: Callable[[str], None],
    ) -> None:
        self.parts = parts
        self.response = response
        self._queue = queue
        self._emit = emit
        self._interrupted = interrupted
        self._close_blocks = close_blocks
        self.speech_over = asyncio.Event()  # set once the speech ended, or was cut
        self._emitted = 0  # pcm bytes emitted as audio deltas
        self._audio_id: str | None = None

    async def pump(self) -> None:
        """Deliver the response's events in order, each turned into its ``strands.bidi`` events (a held
        answer's once it is released: its playback starts then)."""
        await self._emit.released.wait()
        while (event := await self._queue.get()) is not None:
            self.response.delivered(event)
            if event["type"] == "audio_chunk":
                await self._play(base64.b64decode(event["data"]))
            else:
                self._deliver(event)

    def _end_audio(self) -> None:
        """The speech is over: the audio's stop event (once)."""
        if not self.speech_over.is_set():
            self.speech_over.set()
            if self._audio_id is not None:
                self._emit(BidiAudioStopEvent(self._audio_id))

    async def _play(self, pcm: bytes) -> None:
        """Emit ``pcm`` in slices, each once the caller's playback is within ``lead_s`` of it."""
        for offset in range(0, len(pcm), _SLICE_BYTES):
            await within_lead(self._unplayed_s, lead_s=self.parts.lead_s, poll_s=_PACE_POLL_S)
            if self._interrupted():
                return
            piece = pcm[offset : offset + _SLICE_BYTES]
            self._emit_audio(piece)
            self._emitted += len(piece)

    def _unplayed_s(self) -> float | None:
        """What was emitted and not yet played; None once the answer is cut (nothing to wait for)."""
        if self._interrupted():
            return None
        return self._emitted / BYTES_PER_SECOND - self.response.log.played_s

    def _emit_audio(self, piece: bytes) -> None:
        if self._audio_id is None:
            self._audio_id = f"{self.parts.answer_id}-audio"
            self.parts.marks["first_audio"] = time.perf_counter()
            self._emit(BidiAudioStartEvent(self._audio_id))
            if self.parts.on_speaking is not None:
                self.parts.on_speaking()
        audio = base64.b64encode(piece).decode("ascii")
        self._emit(
            BidiAudioDeltaEvent(
                audio=audio, format="pcm", sample_rate=SAMPLE_RATE, channels=1, content_id=self._audio_id
            )
        )

    def _deliver(self, event: Event) -> None:
        if event["type"] == "interrupted":
            # Nothing more is heard after a barge-in: the speech is over now, whenever the session closes.
            self._close_blocks(str(event["heard_text"]))
            self._end_audio()
        elif event["type"] == "audio_end":
            self._end_audio()
        elif event["type"] == "error":
            logger.warning("answer_id=<%s>, code=<%s> | speech error", self.parts.answer_id, event["code"])
