"""The asyncio adapter of the listening pipeline: PCM16 in, the caller's turns out as typed events.

:meth:`Listener.feed` takes audio of any frame size; each full VAD frame goes through the VAD and the
sans-I/O :class:`~strands_voice.listen._detector.TurnDetector`, whose events come out of
:meth:`Listener.events` as they are. A turn's audio (with ``pre_roll_s`` before its first word) goes to a
recognition stream opened when the turn starts. At each pause the detector asks for a judgment: the
listener starts the speculative recognition and, with a turn-end model, runs it on the turn's audio in a
tracked task (feeding never waits for it), then hands the verdict (:func:`judge_turn`: audio and words)
back to the detector. The final recognition of a turn runs in a tracked task too; it is the pause's when
nothing but silence followed the pause's recognition (frames the VAD was unsure of are heard again).

A recognizer that fails (it cannot open a stream, a stream breaks, the final recognition raises) costs
that turn only: a :class:`~strands_voice.listen.RecognitionFailed` takes its final transcript's place, in
turn order, and feeding goes on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Coroutine
from typing import Any, Final

import numpy as np
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import RecognitionError

from strands_voice.listen._detector import JudgeTurn, SpeechState, TurnDetector
from strands_voice.listen._end_of_turn import judge_turn
from strands_voice.listen._events import (
    CallerResumed,
    EndOfTurn,
    ListenEvent,
    OnsetDropped,
    RecognitionFailed,
    SpeechOnset,
    SpeechStarted,
    Transcript,
    TurnEnded,
)
from strands_voice.listen._pitch import final_fall
from strands_voice.listen._recognizer import RecognitionStream, Recognized, Recognizer
from strands_voice.listen._settings import ListenSettings
from strands_voice.listen._turn_model import TurnModel, default_turn_model
from strands_voice.listen._vad import SileroVad, Vad
from strands_voice.listen._words import backchannel_prompt

__all__ = ["DEFAULT", "DefaultTurnModel", "Listener", "recognition_failed"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 5.0
#: Why a turn whose words the recognizer's check did not trust is asked again, not answered.
UNTRUSTED: Final = "the recognized words could not be trusted (a repetition loop, or more than was said)"


class DefaultTurnModel:
    """The type of :data:`DEFAULT`: the default turn-end model (Smart Turn where installed), as an
    argument value."""


#: ``turn_model=DEFAULT``: the installed turn-end model, or the silence timer without one.
DEFAULT: Final = DefaultTurnModel()


class Listener:
    """Finds the caller's turns in streamed audio and recognizes them.

    Args:
        settings: Thresholds and durations (default :class:`ListenSettings`).
        vad: The VAD (default :class:`~strands_voice.listen.SileroVad`).
        recognizer: The engine (default :class:`~strands_voice.listen.WhisperRecognizer` in
            ``settings.language``).
        turn_model: The turn-end model (default: Smart Turn where installed; None: the silence timer).
            Not used with ``settings.end_of_turn == "silence"``.

    Attributes:
        agent_speaking: Set by the listener's user while the agent's answer is heard: a turn that starts
            then is recognized with the backchannels as context (they are what a listener says over a
            speaker).
    """

    def __init__(
        self,
        settings: ListenSettings | None = None,
        *,
        vad: Vad | None = None,
        recognizer: Recognizer | None = None,
        turn_model: TurnModel | DefaultTurnModel | None = DEFAULT,
    ) -> None:
        self.settings = settings or ListenSettings()
        if recognizer is None:
            from strands_voice.listen._whisper import WhisperRecognizer

            recognizer = WhisperRecognizer(language=self.settings.language)
        self.recognizer = recognizer
        self._vad = vad or SileroVad()
        if self._vad.frame_samples != self.settings.frame_samples:
            self.settings = _with_frame(self.settings, self._vad.frame_samples)
        if self.settings.end_of_turn == "silence":
            turn_model = None
        self.turn_model = default_turn_model() if isinstance(turn_model, DefaultTurnModel) else turn_model
        self._detector = TurnDetector(self.settings, judged_by_model=self.turn_model is not None)
        self.agent_speaking = False
        self._frame_bytes = self.settings.frame_samples * 2
        self._pending = bytearray()
        pre_roll_frames = max(
            1, self.settings.samples(self.settings.pre_roll_s) // self.settings.frame_samples
        )
        self._pre_roll: collections.deque[bytes] = collections.deque(maxlen=pre_roll_frames)
        self._onset: list[bytes] = []  # frames since the onset (a turn once min_speech_s of them count)
        self._turn_audio = bytearray()  # the turn's audio so far (what the turn-end model hears)
        self._last_partial = ""
        self._recognized_to = -1  # the speculative recognition's audio ends here (detector samples)
        self._stream: RecognitionStream | None = None
        self._queue: asyncio.Queue[ListenEvent | None] = asyncio.Queue()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._last_final: asyncio.Task[None] | None = None  # finals go out in turn order
        self._closed = False

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
        detected = self._detector.feed(self._vad.probability(samples))
        if any(isinstance(event, SpeechOnset) for event in detected):
            self._onset = [*self._pre_roll]
        if self._detector.state is SpeechState.ONSET or any(
            isinstance(event, SpeechStarted | OnsetDropped) for event in detected
        ):
            self._onset.append(frame)
        elif self._detector.state is not SpeechState.IDLE:
            self._turn_audio += frame
            await self._feed_stream(frame)
        self._pre_roll.append(frame)
        for event in detected:
            await self._detected(event)

    async def _detected(self, event: ListenEvent | JudgeTurn) -> None:
        if isinstance(event, JudgeTurn):
            await self._judge_pause(event.pause)
            return
        self._queue.put_nowait(event)
        if isinstance(event, SpeechStarted):
            await self._turn_started()
        elif isinstance(event, TurnEnded):
            if (
                self._stream is not None
                and self.settings.speculative
                and self._detector.last_speech_end != self._recognized_to
            ):
                # Frames the VAD was unsure of came after the pause was recognized (a quiet last word): the
                # final recognition hears them.
                await self._guarded(self._stream.resume())
            self._turn_ended(event.end_of_turn)
        elif isinstance(event, CallerResumed) and self._stream is not None and self.settings.speculative:
            await self._guarded(self._stream.resume())

    async def _turn_started(self) -> None:
        onset, self._onset = b"".join(self._onset), []
        self._turn_audio, self._last_partial, self._recognized_to = bytearray(onset), "", -1
        prompt = backchannel_prompt(self.settings.language) if self.agent_speaking else None
        try:
            self._stream = await self.recognizer.open(prompt)
        except Exception as exc:
            self._in_turn_order(_ready(recognition_failed(exc)))
            return
        await self._feed_stream(onset)

    def _turn_ended(self, end_of_turn: EndOfTurn) -> None:
        stream, self._stream = self._stream, None
        self._turn_audio = bytearray()
        if stream is not None:  # else the turn's failure is already queued in its place
            self._in_turn_order(_finish(stream, end_of_turn))

    async def _judge_pause(self, pause: int) -> None:
        """Start the speculative recognition, and judge the pause off the loop (the words, then the model).

        The recognition starts here, not at the pause's first silent frame: the quiet end of the last word
        is in the frames after it (``ListenSettings.speculate_after_s``).
        """
        stream = self._stream
        if stream is not None and self.settings.speculative:
            self._recognized_to = self._detector.last_speech_end
            await self._guarded(stream.pause())
        if self.turn_model is None and stream is None:
            return
        audio = np.frombuffer(bytes(self._turn_audio), dtype=np.int16).astype(np.float32) / 32768.0
        self._spawn(self._verdict(pause, stream if self.settings.speculative else None, audio))

    async def _verdict(
        self, pause: int, stream: RecognitionStream | None, audio: np.ndarray[Any, Any]
    ) -> None:
        words: Recognized | None = None
        if stream is not None:
            with contextlib.suppress(Exception):  # the stream's own failure is reported by finish()
                words = await stream.words_so_far()
        if words is not None and self._detector.pause == pause:
            self._partial(words.text, words.confidence)
        model = self.turn_model
        if model is None or self._detector.pause != pause:
            return
        # The sound is judged after the words, not beside them: on a small machine the two would share its
        # cores, and the words come first (a speculative answer starts from them).
        p_audio, fall = await asyncio.to_thread(_sound, model, audio)
        text = words.text if words is not None and words.trusted else None
        verdict = judge_turn(p_audio, text, self.settings.language, fall=fall)
        logger.debug(
            "pause=<%d>, complete=<%s>, p=<%.2f>, wait_s=<%s> | pause judged",
            pause,
            verdict.complete,
            verdict.p,
            verdict.wait_s,
        )
        for event in self._detector.judged(pause, verdict.complete, verdict.p, verdict.wait_s):
            await self._detected(event)

    async def _feed_stream(self, pcm16: bytes) -> None:
        if self._stream is not None:
            partials = await self._guarded(self._stream.feed(pcm16))
            for text in partials or ():
                self._partial(text, None)

    def _partial(self, text: str, confidence: float | None) -> None:
        """A partial transcript, unless it says what the last one said."""
        if text and text != self._last_partial:
            self._last_partial = text
            self._queue.put_nowait(Transcript(text, final=False, confidence=confidence))

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

    def _spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _in_turn_order(self, outcome: Awaitable[ListenEvent]) -> None:
        """Queue a turn's outcome after the previous turn's (an engine may answer out of order: two streams
        of a streaming engine, or a short turn recognized before a long one)."""
        self._last_final = self._spawn(self._queue_after(outcome, self._last_final))

    async def _queue_after(
        self, outcome: Awaitable[ListenEvent], previous: asyncio.Task[None] | None
    ) -> None:
        event = await outcome
        if previous is not None:
            await asyncio.wait([previous])
        self._queue.put_nowait(event)

    async def settle(self) -> None:
        """Wait until every judgment and recognition started so far is done (a file fed faster than real
        time, or a test, then sees the verdicts an infinitely fast machine would give)."""
        while pending := {task for task in self._tasks if not task.done()}:
            await asyncio.wait(pending)

    async def events(self) -> AsyncIterator[ListenEvent]:
        """The events, in order, until :meth:`aclose`."""
        while (event := await self._queue.get()) is not None:
            yield event

    async def aclose(self, *, wait_for_final: bool = False) -> None:
        """Stop: the open turn is dropped (or recognized first, ``wait_for_final``); events() ends."""
        if self._closed:
            return
        self._closed = True
        if wait_for_final and self._last_final is not None:
            await asyncio.wait([self._last_final], timeout=30.0)
        await cancel_and_wait(self._tasks, _CLOSE_GRACE_S)
        if self._stream is not None:
            await self._stream.aclose()
            self._stream = None
        self._queue.put_nowait(None)


async def _finish(stream: RecognitionStream, end_of_turn: EndOfTurn) -> ListenEvent:
    """A turn's final text (or why there is none)."""
    try:
        words = await stream.finish()
    except Exception as exc:
        return recognition_failed(exc)
    finally:
        with contextlib.suppress(Exception):
            await stream.aclose()
    logger.debug("chars=<%d>, by=<%s> | turn recognized", len(words.text), end_of_turn.by)
    if not words.trusted:
        return recognition_failed(RecognitionError("internal", UNTRUSTED, retryable=True))
    return Transcript(words.text, final=True, confidence=words.confidence, end_of_turn=end_of_turn)


def _sound(model: TurnModel, audio: np.ndarray[Any, Any]) -> tuple[float, float | None]:
    """What the turn's audio says (blocking): the turn-end model's probability and the end pitch."""
    return model.probability(audio), final_fall(audio)


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
