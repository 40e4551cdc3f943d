"""One answer of the cascade: a caller's turn in, the model's turns spoken through the one voice pipeline.

The audio goes out close to real time: each ``audio_chunk`` is cut into short slices and a slice is
emitted only while what was emitted runs at most ``lead_s`` ahead of what the caller has played (the
response's playback count). ``BidiAgent``'s player knows no pause, so this is what makes a pause stop the
sound at once: a paused answer (:meth:`SpokenAnswer.pause`) emits nothing more, and its player runs dry
within the lead; :meth:`SpokenAnswer.resume` goes on from the next sample. Nothing is repeated or lost.

An :class:`Answer` runs a Strands text model on the conversation and speaks what it writes with the SAME
:class:`~strands_voice.speech.Response` that ``VoiceCallbackHandler`` uses (chunker, TTS session,
barge-in, what-was-heard): the model's deltas go to :meth:`Response.feed`, a tool call to
:meth:`Response.step_ended`, and the response's Leg 3 events, held in an
:class:`~strands_voice.speech.EventQueue`, are turned into ``strands.bidi`` events as they are
delivered:

- ``audio_chunk`` (pcm16, 24 kHz) -> ``BidiAudioDeltaEvent`` (between ``BidiAudioStart/StopEvent``);
- each model step's words -> one assistant transcript (start when it starts writing; the text and the
  stop once its speech has ended, or was cut: then only what the caller HEARD, the ``interrupted``
  event's ``heard_text``), and the same text in the model's conversation;
- a tool call -> ``BidiToolUseBlocksEvent``; the answer waits for the results ``BidiAgent`` sends back,
  then the model goes on, while the words written before the call are being spoken.
- held (a speculation): nothing emitted until :meth:`SpokenAnswer.release`; dropped first, not one event.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiAudioStartEvent,
    BidiAudioStopEvent,
    BidiOutputEvent,
    BidiResponseStartEvent,
    BidiResponseStopEvent,
    BidiToolUseBlocksEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)
from strands.event_loop.streaming import stream_messages
from strands.models.model import Model
from strands.types.content import ContentBlock, Message, Messages
from strands.types.events import ModelStopReason
from strands.types.tools import ToolResult, ToolSpec, ToolUse
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.events import Event
from strands_voice_protocol.sentences import sentence_ends
from strands_voice_protocol.speech_text import clean_for_speech
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice.cascade._conversation import model_messages
from strands_voice.cascade._held import HeldOutlet
from strands_voice.speech._event_queue import EventQueue
from strands_voice.speech._response import Response

__all__ = ["AnswerParts", "Marks", "SpokenAnswer"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 5.0
#: The longest slice of audio emitted at once (40 ms of pcm16 at 24 kHz).
_SLICE_BYTES: Final = 2 * SAMPLE_RATE // 25


class Emit(Protocol):
    """Hands one ``strands.bidi`` event to the cascade's receive stream."""

    def __call__(self, event: BidiOutputEvent, /) -> None:
        """Queue ``event``."""


Marks = dict[str, float]


@dataclass
class _Block:
    """One model step's words: its transcript block and its message in the model's conversation."""

    content_id: str
    message: Message
    text: str = ""


@dataclass
class AnswerParts:
    """What an answer runs on (the cascade's state for this answer).

    Attributes:
        answer_id: The response id of the ``BidiResponseStart/StopEvent``.
        model: The Strands text model.
        system_prompt: The agent's system prompt.
        tool_specs: The agent's tools.
        conversation: The model's conversation (appended to and, after a barge-in, rewritten in place).
        marks: ``time.perf_counter()`` of the answer's milestones (``first_text``, ``first_sentence``,
            ``first_audio``), for the bench.
        first_message: Where this answer's messages begin in ``conversation`` (its question first).
        lead_s: How far the emitted audio may run ahead of what the caller has played.
        on_speaking: Called once, when the answer's first audio is emitted.
        held: Emit nothing until :meth:`SpokenAnswer.release` (a speculation).
    """

    answer_id: str
    model: Model
    system_prompt: str | None
    tool_specs: list[ToolSpec]
    conversation: Messages
    marks: Marks = field(default_factory=dict)
    first_message: int = 0
    lead_s: float = 0.1
    on_speaking: Callable[[], None] | None = None
    held: bool = False


class SpokenAnswer:
    """One answer (see the module docstring).

    Args:
        parts: The model, the conversation and the ids.
        response: The voice pipeline of this answer (its outlet is ``queue``).
        queue: The response's outlet.
        emit: Where the ``strands.bidi`` events go.
        linger: Takes over the response's run when it outlives a cut answer (closing its session).
    """

    def __init__(
        self,
        parts: AnswerParts,
        response: Response,
        queue: EventQueue,
        emit: Emit,
        linger: Callable[[asyncio.Task[None]], None],
    ) -> None:
        self.parts = parts
        self._linger = linger
        self._speech_over = asyncio.Event()
        self.response = response
        self._queue = queue
        self._emit = HeldOutlet(emit, held=parts.held)
        self.tool_results: asyncio.Queue[list[ToolResult]] = asyncio.Queue()
        self.pending_tool_ids: set[str] = set()
        self.interrupted = False
        self._emitted = 0  # pcm bytes emitted as audio deltas
        self.done = asyncio.Event()
        self._blocks: list[_Block] = []
        self._blocks_closed = False
        self._audio_id: str | None = None
        self._model_task: asyncio.Task[None] | None = None

    def interrupt(self) -> None:
        """Barge-in: Leg 1 cancel, the undelivered audio dropped (the Response's rule), the model stopped.

        The conversation keeps what was heard of it at once (the next answer may start right away).
        """
        if self.interrupted or self.done.is_set():
            return
        self.interrupted = True
        self.response.interrupt()
        self._stop_model()
        self._close_blocks(self.response.log.interrupted_fields()["heard_text"])

    def drop(self) -> None:
        """Stop an answer nothing of which was heard: it leaves no trace in the conversation (its question
        included: the caller went on, and the next turn asks it again, joined to what they added)."""
        if self.interrupted or self.done.is_set():
            return
        self.interrupted = True
        self._emit.silence()  # held: not one event of it was emitted, none will be
        self.pending_tool_ids = set()
        self.response.interrupt()
        self._stop_model()
        self._close_blocks("")
        del self.parts.conversation[self.parts.first_message :]

    def release(self) -> None:
        """The turn ended with this answer's words: what it kept goes out in order, and it plays on."""
        self._emit.release()

    def pause(self) -> None:
        """Hold the speech where it is (see the module docstring)."""
        self.response.pause()

    def resume(self) -> None:
        """Go on from where :meth:`pause` held it."""
        self.response.resume()

    def _stop_model(self) -> None:
        self._cancel_pending_tools()  # now: the next answer's messages come after these
        if self._model_task is not None:
            self._model_task.cancel()

    async def run(self) -> None:
        """Write and speak the answer; ends once its speech has ended (or was cut).

        After a barge-in the answer ends with its ``audio_end``; the TTS session may take longer to let
        go (the endpoint finishing a step), so the response's run is then left to ``linger`` (a tracked
        task of the cascade) instead of holding up the caller's next turn.
        """
        answer_id = self.parts.answer_id
        self._emit(BidiResponseStartEvent(answer_id))
        speaking = asyncio.create_task(self.response.run(), name=f"speak-{answer_id}")
        pump = asyncio.create_task(self._pump(), name=f"pump-{answer_id}")
        self._model_task = asyncio.create_task(self._model_turns(), name=f"model-{answer_id}")
        over = asyncio.create_task(self._speech_over.wait(), name=f"over-{answer_id}")
        try:
            await asyncio.wait([self._model_task])
            await asyncio.wait([speaking, over], return_when=asyncio.FIRST_COMPLETED)
            self._queue.put_nowait(None)
            await self._played_out(pump)
        finally:
            stopping = [pump, self._model_task, over]
            if not speaking.done() and self.interrupted:
                self._linger(speaking)
            else:
                stopping.append(speaking)
            await cancel_and_wait(stopping, _CLOSE_GRACE_S)
            heard = self.response.log.interrupted_fields()["heard_text"] if self.interrupted else None
            self._close_blocks(heard)  # a no-op when the pump delivered ``interrupted`` already
            self.done.set()
            self._emit(BidiResponseStopEvent(answer_id))
            logger.debug("answer_id=<%s>, interrupted=<%s> | answer ended", answer_id, self.interrupted)

    async def _played_out(self, pump: asyncio.Task[None]) -> None:
        """Wait for the pump to play what is queued: at real time, and not at all while the caller holds
        it (an answer made in full long before it is heard); after a barge-in, for a grace at most."""
        while not pump.done():
            await asyncio.wait([pump], timeout=_CLOSE_GRACE_S)
            if self.interrupted:
                return

    # --- the model ------------------------------------------------------------------------------------

    async def _model_turns(self) -> None:
        try:
            while True:
                stop_reason, message = await self._one_turn()
                tool_uses: list[ToolUse] = [
                    block["toolUse"] for block in message["content"] if "toolUse" in block
                ]
                if stop_reason != "tool_use" or not tool_uses:
                    return
                self.response.step_ended()  # what was written before the call is spoken now
                self.pending_tool_ids = {tool_use["toolUseId"] for tool_use in tool_uses}
                self._emit(BidiToolUseBlocksEvent(tool_uses))
                results = await self.tool_results.get()
                self.pending_tool_ids = set()
                self.parts.conversation.append(
                    {"role": "user", "content": [{"toolResult": result} for result in results]}
                )
        except Exception:
            logger.exception("answer_id=<%s> | model failed; the answer ends here", self.parts.answer_id)
        finally:
            self.response.end()

    def _cancel_pending_tools(self) -> None:
        """A cut answer's tool calls get an error result now (the conversation stays well-formed)."""
        if self.pending_tool_ids:
            self.parts.conversation.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": tool_use_id,
                                "status": "error",
                                "content": [{"text": "The caller interrupted before the result."}],
                            }
                        }
                        for tool_use_id in sorted(self.pending_tool_ids)
                    ],
                }
            )
            self.pending_tool_ids = set()

    async def _one_turn(self) -> tuple[str, Message]:
        parts = self.parts
        block: _Block | None = None
        stream = stream_messages(
            parts.model, parts.system_prompt, model_messages(parts.conversation), parts.tool_specs
        )
        async for event in stream:
            if isinstance(event, ModelStopReason):
                final = copy.deepcopy(event.message)
                if block is not None:
                    block.message["content"] = final["content"]
                else:
                    parts.conversation.append(final)
                return str(event.stop_reason), final
            text = event.get("data") if not event.get("reasoning") else None
            if isinstance(text, str) and text:
                block = block or self._open_block()
                block.text += text
                block.message["content"] = [{"text": block.text}]
                self._mark_text(block.text)
                self.response.feed(text)
        raise RuntimeError("the model's stream ended without a stop reason")

    def _mark_text(self, text: str) -> None:
        marks = self.parts.marks
        now = time.perf_counter()
        marks.setdefault("first_text", now)
        if "first_sentence" not in marks and sentence_ends(text):
            marks["first_sentence"] = now

    def _open_block(self) -> _Block:
        content_id = f"{self.parts.answer_id}-text-{len(self._blocks)}"
        message: Message = {"role": "assistant", "content": []}
        self.parts.conversation.append(message)
        block = _Block(content_id, message)
        self._blocks.append(block)
        self._emit(BidiTranscriptStartEvent("assistant", content_id))
        return block

    def _close_blocks(self, heard: str | None) -> None:
        """End each turn's transcript: its words, or (``heard`` given) only the part that was heard."""
        if self._blocks_closed:
            return
        self._blocks_closed = True
        remaining = heard.strip() if heard is not None else None
        for block in self._blocks:
            said = block.text
            if remaining is not None:
                size = len(clean_for_speech(block.text))
                said, remaining = remaining[:size].strip(), remaining[size:].lstrip()
                others = [part for part in block.message["content"] if "text" not in part]
                kept: list[ContentBlock] = [{"text": said}] if said else []
                block.message["content"] = kept + others
            if said:
                self._emit(BidiTranscriptDeltaEvent(said, "assistant", block.content_id))
            self._emit(BidiTranscriptStopEvent("assistant", block.content_id))

    # --- the speech -----------------------------------------------------------------------------------

    def _end_audio(self) -> None:
        if not self._speech_over.is_set():
            self._speech_over.set()
            if self._audio_id is not None:
                self._emit(BidiAudioStopEvent(self._audio_id))

    async def _pump(self) -> None:
        """Deliver the response's events in order, each turned into its ``strands.bidi`` events (a held
        answer's once it is released: its playback starts then)."""
        await self._emit.released.wait()
        while (event := await self._queue.get()) is not None:
            self.response.delivered(event)
            if event["type"] == "audio_chunk":
                await self._play(base64.b64decode(event["data"]))
            else:
                self._deliver(event)

    async def _play(self, pcm: bytes) -> None:
        """Emit ``pcm`` in slices, each once the caller's playback is within ``lead_s`` of it."""
        for offset in range(0, len(pcm), _SLICE_BYTES):
            await self._within_lead()
            if self.interrupted:
                return
            piece = pcm[offset : offset + _SLICE_BYTES]
            self._emit_audio(piece)
            self._emitted += len(piece)

    async def _within_lead(self) -> None:
        log = self.response.log
        while not self.interrupted:
            ahead = self._emitted / BYTES_PER_SECOND - log.played_s - self.parts.lead_s
            if ahead <= 0:
                return
            await asyncio.sleep(min(ahead, 0.02))

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
