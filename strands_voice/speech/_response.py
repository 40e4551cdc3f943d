"""One agent response's voice pipeline: text in, Leg 3 speech events out, over ONE TTS session.

A :class:`Response` is what :class:`~strands_voice.VoiceCallbackHandler` runs for each agent
response (one invocation, however many model steps and tool calls it takes). Its coroutine
:meth:`Response.run` runs on one event loop (the handler's worker thread's, or the loop of the caller
of ``handler.stream()``); everything else may be called from any thread:

- :meth:`Response.feed` hands over a text delta, :meth:`Response.step_ended` marks the end of a model step
  (the model stopped to call a tool, or its message ended), :meth:`Response.end` ends the text.
- ``bidi`` mode feeds the incremental chunker and speaks each chunk the moment it is released; at a step
  boundary whatever text is pending is spoken at once, so "Let me check that for you" (no final period)
  is heard while the tool runs, and two steps never share a chunk.
- ``batch`` mode waits for the whole text, then speaks it: the fewest requests that fit the endpoint's
  per-request limit, each step on its own (the fair baseline of ``bidi``).
- :meth:`Response.interrupt` is barge-in: Leg 1 ``cancel``, the undelivered audio dropped, nothing more
  spoken, one ``interrupted`` event that says what the caller heard (played: see
  ``_heard``), and, when the agent writing the answer is known (:attr:`Response.memory`),
  the agent cancelled and its answer remembered as the heard text (:class:`AnswerWriter`).

Events go to an :class:`~strands_voice.speech._event_stream.Outlet` as they happen. When the outlet only holds
them for a consumer, whoever hands them over reports each delivery with :meth:`Response.delivered`, so
that an ``interrupted`` event counts only what really reached the caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final, Protocol

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import Event, EventBuilder
from strands_voice_protocol.sentences import split_at_sentence_ends
from strands_voice_protocol.speech_text import clean_for_speech

from strands_voice.speech._event_stream import Outlet
from strands_voice.speech._heard import DeliveryLog
from strands_voice.speech._options import ResponseSettings, VoiceOptions
from strands_voice.speech._synthesis import Synthesis
from strands_voice.speech._tracing import AnswerTrace

logger = logging.getLogger(__name__)


class AnswerWriter(Protocol):
    """The agent writing an answer, as its response sees it (the agent package's ``AnswerMemory``)."""

    def interrupted(self, heard: str) -> None:
        """The caller barged in having heard ``heard``: stop writing, and remember only that."""

    def finished(self) -> None:
        """The agent's run ended, however it ended."""


class _StepEnd:
    """Inbox marker: the model's step ended (a tool call, or the end of its message)."""


_STEP_END: Final = _StepEnd()

#: Event types that carry a response's audio: what a barge-in drops when not yet delivered.
_AUDIO_EVENTS: Final = frozenset({"audio_chunk", "sentence_complete"})


def split_for_requests(text: str, max_chars: int) -> list[str]:
    """Split text into the fewest pieces of at most ``max_chars``, at sentence ends where possible.

    Sentences end where the chunker ends them
    (:func:`strands_voice_protocol.sentences.split_at_sentence_ends`).

    A single sentence longer than ``max_chars`` is split at whitespace (hard-cut if it has none).
    """
    text = text.strip()
    if not text:
        return []
    if len(text) <= max_chars:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in split_at_sentence_ends(text):
        while len(sentence) > max_chars:
            cut = sentence.rfind(" ", 0, max_chars + 1)
            cut = cut if cut > 0 else max_chars
            head, sentence = sentence[:cut].strip(), sentence[cut:].strip()
            if current:
                pieces.append(current)
                current = ""
            pieces.append(head)
        if not sentence:
            continue
        candidate = f"{current} {sentence}" if current else sentence
        if len(candidate) <= max_chars:
            current = candidate
        else:
            pieces.append(current)
            current = sentence
    if current:
        pieces.append(current)
    return pieces


class Response:
    """The voice pipeline of one agent response (see the module docstring).

    Args:
        options: Mode, voice, speed and format of this response.
        loop: The loop :meth:`run` runs on (calls from other threads are handed over to it).
        settings: What the handler's responses share (transport, chunker, timeouts, text limit).
        outlet: Receives each event, on ``loop``: the handler's hub (callbacks) or a ``stream()`` queue.
        request_id_prefix: Prefix of the session's request ids.
        memory: The answer's tie to the agent writing it, when known: a barge-in stops that agent and
            leaves the heard text as its answer.
    """

    def __init__(
        self,
        options: VoiceOptions,
        loop: asyncio.AbstractEventLoop,
        settings: ResponseSettings,
        outlet: Outlet,
        request_id_prefix: str | None = None,
        memory: AnswerWriter | None = None,
    ) -> None:
        self.options = options
        self.loop = loop
        self.builder = EventBuilder()  # t_ms counts from here
        self._outlet = outlet
        self._settings = settings
        self.inbox: asyncio.Queue[str | _StepEnd | None] = asyncio.Queue()
        self.synthesis = Synthesis(
            settings,
            self.builder,
            self._emit,
            options,
            request_id_prefix=request_id_prefix,
            # Backpressure: a slow consumer slows the reading of the session's audio.
            wait_for_room=outlet.wait_for_room,
        )
        self.log = DeliveryLog(lambda seq: self.synthesis.chunk_pcm[seq])
        self.trace = AnswerTrace(options)  # the answer's span in the agent's trace
        self.memory = memory
        self.interrupted = False
        self.paused = False
        self.ended = False
        self._end_delivered = False  # the caller has taken the audio_end
        self._text_pending = False  # text was fed since the last step marker (caller's thread)
        self._text_ended = False
        self._task: asyncio.Task[None] | None = None
        self._cancel_requested = False

    # --- any thread -----------------------------------------------------------------------------------

    def _call(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run ``callback`` on the response's loop: at once when already there, else handed over."""
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            callback(*args)
            return
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            logger.debug("response already ended; call dropped")

    def feed(self, text: str, agent: Any = None) -> None:
        """Hand over a text delta (never blocks); ``agent``, when known, parents the answer's span."""
        self.trace.join(agent)
        self._text_pending = True
        self._call(self.inbox.put_nowait, text)

    def step_ended(self) -> None:
        """The model's step ended: speak what is pending now; later text starts a new chunk."""
        if self._text_pending:
            self._text_pending = False
            self._call(self.inbox.put_nowait, _STEP_END)

    def end(self) -> None:
        """No more text for this response (idempotent)."""
        if not self._text_ended:
            self._text_ended = True
            self._call(self.inbox.put_nowait, None)

    def interrupt(self) -> None:
        """Barge-in (idempotent; see the module docstring)."""
        self._call(self._interrupt_now)

    def pause(self) -> None:
        """Hold the speech where it is (the caller may be barging in): nothing more is delivered and the
        heard count stops, until :meth:`resume` (or a barge-in). Idempotent."""
        self._call(self._pause_now, True)

    def resume(self) -> None:
        """Go on from where :meth:`pause` held the speech: nothing repeated, nothing lost."""
        self._call(self._pause_now, False)

    def confirm(self, sentence: int) -> None:
        """The caller's player has played ``sentence`` to its end (see ``DeliveryLog.confirm``)."""
        self._call(self._confirm_now, sentence)

    def _confirm_now(self, sentence: int) -> None:
        if not self.interrupted:
            self.log.confirm(sentence)

    @property
    def heard_ms(self) -> float:
        """The audio the caller has played so far, in milliseconds (paused time not counted)."""
        return round(self.log.played_s * 1000.0, 1)

    @property
    def unplayed_ms(self) -> float:
        """The delivered audio the caller has not played yet, in milliseconds (none after a barge-in: what
        was not played by then never will be)."""
        return 0.0 if self.interrupted else round(self.log.unplayed_s * 1000.0, 1)

    def cancel(self) -> None:
        """Stop at once: the run is cancelled and its session closed."""
        self._call(self._cancel_now)

    # --- on the loop ----------------------------------------------------------------------------------

    def _emit(self, event: Event) -> None:
        self._outlet.put_nowait(event)
        self.trace.observe(event)
        if self._outlet.delivers:
            self.delivered(event)

    def delivered(self, event: Event) -> None:
        """Note that ``event`` reached the caller."""
        self.log.delivered(event)
        self._end_delivered = self._end_delivered or event["type"] == "audio_end"

    def _cancel_now(self) -> None:
        self._cancel_requested = True
        if self._task is not None:
            self._task.cancel()

    def _pause_now(self, pause: bool) -> None:
        # An answer made faster than it is spoken has ended (its end is queued) long before the caller has
        # heard it: it is still held, since what it queued has not been delivered.
        if pause == self.paused or self.interrupted:
            return
        self.paused = pause
        if pause:
            self.log.pause()
            self._outlet.hold()
        else:
            self.log.resume()
            self._outlet.release()
        logger.debug("paused=<%s>, heard_ms=<%.0f> | speech held or resumed", pause, self.heard_ms)

    def _interrupt_now(self) -> None:
        # A response that ended while paused, or whose end its consumer has not taken yet (made faster than
        # it is played), still holds its end: it was never heard, so it is cut too.
        if self.interrupted or (self.ended and self._end_delivered and not self.paused):
            return
        self.interrupted, held_end = True, self.ended
        self.synthesis.interrupt()
        cut = _AUDIO_EVENTS | {"audio_end"} if held_end else _AUDIO_EVENTS
        dropped = self._outlet.purge(lambda event: event["type"] in cut)
        fields = self.log.interrupted_fields()
        logger.debug(
            "sentences_done=<%s>, sentence_cut=<%s>, dropped=<%d> | interrupted",
            fields["sentences_done"],
            fields["sentence_cut"],
            dropped,
        )
        if self.memory is not None:
            # The agent stops writing and remembers what was heard, not what was written.
            self.memory.interrupted(fields["heard_text"])
        self._emit(self.builder.interrupted(**fields))
        if held_end:
            self.ended = False
            self._audio_end(completed=False)  # what was delivered, after the interrupted event
        if self.paused:  # the held events (the interrupted one last) go out; the held audio is gone
            self.paused = False
            self._outlet.release()

    async def run(self) -> None:
        """Speak the response's text as it comes; always ends with ``audio_end``."""
        self._task = asyncio.current_task()
        completed = False
        try:
            if self._cancel_requested:
                raise asyncio.CancelledError
            self.synthesis.start()
            if self.options.mode == "bidi":
                await self._speak_as_written()
            else:
                await self._speak_when_written()
            await self.synthesis.finish()
            if not self.interrupted:  # after a barge-in the owed audio is dropped anyway
                await self.synthesis.wait()
            completed = True
        finally:
            if self.interrupted:
                # Nothing more is emitted after a barge-in: the speech ends now, not once the endpoint
                # has let the session go (it may be busy synthesizing for seconds first).
                self._audio_end(completed=False)
            await self.synthesis.aclose()
            self._audio_end(completed)

    def _audio_end(self, completed: bool) -> None:
        """The response's one ``audio_end`` (once): after a barge-in it counts what was delivered, else
        what the session made (after the encoder's tail when the speech completed)."""
        if self.ended:
            return
        self.ended = True
        if self.interrupted:
            chunks, duration_s = self.log.chunks, self.log.duration_s
        else:
            if completed:
                self.synthesis.flush_encoder()
            chunks, duration_s = self.synthesis.chunks, self.synthesis.pcm_bytes / BYTES_PER_SECOND
        self._emit(self.builder.audio_end(chunks=chunks, duration_s=duration_s))

    async def _speak_as_written(self) -> None:
        chunker = self._settings.chunker_factory()
        while (item := await self.inbox.get()) is not None:
            chunks = chunker.finish() if isinstance(item, _StepEnd) else chunker.feed(item)
            for chunk in chunks:
                await self.synthesis.speak(chunk)
        for chunk in chunker.finish():
            await self.synthesis.speak(chunk)

    async def _speak_when_written(self) -> None:
        steps: list[list[str]] = [[]]
        while (item := await self.inbox.get()) is not None:
            if isinstance(item, _StepEnd):
                steps.append([])
            else:
                steps[-1].append(item)
        for step in steps:
            for piece in split_for_requests(
                clean_for_speech("".join(step)), self._settings.max_request_chars
            ):
                await self.synthesis.speak(piece)
