"""The asyncio adapter of the listening pipeline: PCM16 in, the caller's turns out as typed events.

:meth:`Listener.feed` takes audio of any frame size; each full VAD frame goes through the VAD and the
sans-I/O :class:`~strands_voice.listen.TurnDetector`; a turn's audio (with ``pre_roll_s`` before
its first word) goes to a recognition stream opened when the turn starts. The final recognition of a
turn runs in a tracked task, so feeding never waits for it. Events come out of :meth:`Listener.events`.
A recognizer that fails (it cannot open a stream, a stream breaks, the final recognition raises) costs
that turn only: a :class:`~strands_voice.listen.RecognitionFailed` takes its final transcript's
place, in turn order, and feeding goes on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Awaitable

import numpy as np
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import RecognitionError

from strands_voice.listen import _detector as turns
from strands_voice.listen import _events as events
from strands_voice.listen._events import ListenEvent, RecognitionFailed, Transcript
from strands_voice.listen._recognizer import RecognitionStream, Recognizer
from strands_voice.listen._settings import ListenSettings
from strands_voice.listen._vad import SileroVad, Vad

__all__ = ["Listener"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S = 5.0


class Listener:
    """Finds the caller's turns in streamed audio and recognizes them.

    Args:
        settings: Thresholds and durations (default :class:`ListenSettings`).
        vad: The VAD (default :class:`~strands_voice.listen.SileroVad`).
        recognizer: The engine (default :class:`~strands_voice.listen.WhisperRecognizer`).
    """

    def __init__(
        self,
        settings: ListenSettings | None = None,
        *,
        vad: Vad | None = None,
        recognizer: Recognizer | None = None,
    ) -> None:
        self.settings = settings or ListenSettings()
        if recognizer is None:
            from strands_voice.listen._whisper import WhisperRecognizer

            recognizer = WhisperRecognizer()
        self.recognizer = recognizer
        self._vad = vad or SileroVad()
        if self._vad.frame_samples != self.settings.frame_samples:
            self.settings = _with_frame(self.settings, self._vad.frame_samples)
        self._detector = turns.TurnDetector(self.settings)
        self._frame_bytes = self.settings.frame_samples * 2
        self._pending = bytearray()
        pre_roll_frames = max(
            1, self.settings.samples(self.settings.pre_roll_s) // self.settings.frame_samples
        )
        self._pre_roll: collections.deque[bytes] = collections.deque(maxlen=pre_roll_frames)
        self._onset: list[bytes] = []  # frames since the onset (a turn once min_speech_s of them count)
        self._stream: RecognitionStream | None = None
        self._queue: asyncio.Queue[ListenEvent | None] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_final: asyncio.Task[None] | None = None  # finals go out in turn order
        self._closed = False

    def _seconds(self, samples: int) -> float:
        return samples / self.settings.sample_rate

    async def feed(self, pcm16: bytes) -> None:
        """Audio in (PCM16 mono at ``settings.sample_rate``, any length)."""
        if self._closed:
            return
        self._pending += pcm16
        while len(self._pending) >= self._frame_bytes:
            frame = bytes(self._pending[: self._frame_bytes])
            del self._pending[: self._frame_bytes]
            await self._frame(frame)

    async def _frame(self, frame: bytes) -> None:
        samples = np.frombuffer(frame, dtype=np.int16).astype(np.float32) / 32768.0
        state_before = self._detector.state
        detected = self._detector.feed(self._vad.probability(samples))
        if state_before == "idle" and self._detector.state == "onset":
            self._onset = [*self._pre_roll]
        if self._detector.state == "onset" or state_before == "onset":
            self._onset.append(frame)
        elif self._stream is not None:
            await self._feed_stream(frame)
        self._pre_roll.append(frame)
        for event in detected:
            await self._turn_event(event)

    async def _turn_event(self, event: turns.TurnEvent) -> None:
        if isinstance(event, turns.SpeechStarted):
            self._queue.put_nowait(events.SpeechStarted(self._seconds(event.at)))
            onset, self._onset = b"".join(self._onset), []
            try:
                self._stream = await self.recognizer.open()
            except Exception as exc:
                self._in_turn_order(_ready(recognition_failed(exc)))
                return
            await self._feed_stream(onset)
        elif isinstance(event, turns.TurnTooLong):
            self._queue.put_nowait(events.TurnTooLong(self._seconds(event.at)))
        elif isinstance(event, turns.TurnEnded):
            self._queue.put_nowait(
                events.TurnEnded(self._seconds(event.end), self._seconds(self._detector.position))
            )
            stream, self._stream = self._stream, None
            if stream is not None:  # else the turn's failure is already queued in its place
                self._in_turn_order(_finish(stream))
        elif self._stream is None:
            return  # the turn's recognition failed: nothing to pause or resume
        elif isinstance(event, turns.Quiet) and self.settings.speculative:
            await self._guarded(self._stream.pause())
        elif isinstance(event, turns.Resumed) and self.settings.speculative:
            await self._guarded(self._stream.resume())

    async def _feed_stream(self, pcm16: bytes) -> None:
        if self._stream is not None:
            partials = await self._guarded(self._stream.feed(pcm16))
            for text in partials or ():
                self._queue.put_nowait(Transcript(text, final=False))

    async def _guarded[T](self, call: Awaitable[T]) -> T | None:
        """Await a call on the turn's stream; if it fails, the turn's recognition fails (None)."""
        try:
            return await call
        except Exception as exc:
            stream, self._stream = self._stream, None
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.aclose()
            self._in_turn_order(_ready(recognition_failed(exc)))
            return None

    def _in_turn_order(self, outcome: Awaitable[ListenEvent]) -> None:
        """Queue a turn's outcome after the previous turn's (an engine may answer out of order: two streams
        of a streaming engine, or a short turn recognized before a long one)."""
        task = asyncio.create_task(self._queue_after(outcome, self._last_final))
        self._last_final = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _queue_after(
        self, outcome: Awaitable[ListenEvent], previous: asyncio.Task[None] | None
    ) -> None:
        event = await outcome
        if previous is not None:
            await asyncio.wait([previous])
        self._queue.put_nowait(event)

    async def events(self) -> collections.abc.AsyncIterator[ListenEvent]:
        """The events, in order, until :meth:`aclose`."""
        while (event := await self._queue.get()) is not None:
            yield event

    async def aclose(self, *, wait_for_final: bool = False) -> None:
        """Stop: the open turn is dropped (or recognized first, ``wait_for_final``); events() ends."""
        if self._closed:
            return
        self._closed = True
        if wait_for_final and self._tasks:
            await asyncio.wait(set(self._tasks), timeout=30.0)
        await cancel_and_wait(self._tasks, _CLOSE_GRACE_S)
        if self._stream is not None:
            await self._stream.aclose()
            self._stream = None
        self._queue.put_nowait(None)


async def _finish(stream: RecognitionStream) -> ListenEvent:
    """A turn's final text (or why there is none)."""
    try:
        text = await stream.finish()
    except Exception as exc:
        return recognition_failed(exc)
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()
    logger.debug("chars=<%d> | turn recognized", len(text))
    return Transcript(text, final=True)


async def _ready(event: ListenEvent) -> ListenEvent:
    return event


def recognition_failed(exc: Exception) -> RecognitionFailed:
    """What a recognizer's exception means for its turn: a coded error as is, anything else ``internal``."""
    if isinstance(exc, RecognitionError):
        logger.warning("code=<%s> | recognition failed; the turn is dropped: %s", exc.code, exc.message)
        return RecognitionFailed(exc.code, exc.message, exc.retryable)
    logger.error("recognition failed; the turn is dropped", exc_info=exc)
    return RecognitionFailed("internal", f"the recognizer failed ({type(exc).__name__})", retryable=True)


def _with_frame(settings: ListenSettings, frame_samples: int) -> ListenSettings:
    import dataclasses

    return dataclasses.replace(settings, frame_samples=frame_samples)
