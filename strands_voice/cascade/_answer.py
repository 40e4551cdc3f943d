"""One answer of the cascade: a caller's turn in, the model's turns spoken through the one voice pipeline.

A :class:`SpokenAnswer` runs a Strands text model on the conversation (:mod:`._model_loop`) and speaks
what it writes with the SAME :class:`~strands_voice.speech.Response` that ``VoiceCallbackHandler`` uses
(chunker, TTS session, barge-in, what-was-heard); the response's Leg 3 events, held in an
:class:`~strands_voice.speech.EventQueue`, are delivered close to real time as ``strands.bidi`` events
(:mod:`._audio_delivery`). This module is the answer's life: started, paused and resumed, cut by a
barge-in (what the caller heard kept in the conversation), dropped (a speculation nothing of which was
heard: no trace), released (a held speculation: nothing emitted before, not one event if dropped first).

A paused answer (:meth:`SpokenAnswer.pause`) plays nothing more, and ``BidiAgent``'s player runs dry
within the lead; :meth:`SpokenAnswer.resume` goes on from the next sample. Nothing is repeated or lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Final, Protocol

from strands.bidi.types.events import BidiOutputEvent, BidiResponseStartEvent, BidiResponseStopEvent
from strands.types.tools import ToolResult
from strands_voice_protocol.aio.tasks import cancel_and_wait

from strands_voice.cascade._answer_parts import AnswerParts
from strands_voice.cascade._audio_delivery import AudioDelivery
from strands_voice.cascade._held import HeldOutlet
from strands_voice.cascade._model_loop import ModelLoop
from strands_voice.speech import EventQueue, Response

__all__ = ["SpokenAnswer"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 5.0


class Emit(Protocol):
    """Hands one ``strands.bidi`` event to the cascade's receive stream."""

    def __call__(self, event: BidiOutputEvent, /) -> None:
        """Queue ``event``."""


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
        self.response = response
        self._queue = queue
        self._emit = HeldOutlet(emit, held=parts.held)
        self.interrupted = False
        self.done = asyncio.Event()
        self._model = ModelLoop(parts, response, self._emit)
        self._delivery = AudioDelivery(
            parts,
            response,
            queue,
            self._emit,
            interrupted=lambda: self.interrupted,
            close_blocks=self._model.close_blocks,
        )
        self._model_task: asyncio.Task[None] | None = None

    @property
    def tool_results(self) -> asyncio.Queue[list[ToolResult]]:
        """Where ``BidiAgent``'s tool results for this answer go."""
        return self._model.tool_results

    @property
    def pending_tool_ids(self) -> set[str]:
        """The tool calls the answer waits on."""
        return self._model.pending_tool_ids

    def interrupt(self) -> None:
        """Barge-in: Leg 1 cancel, the undelivered audio dropped (the Response's rule), the model stopped.

        The conversation keeps what was heard of it at once (the next answer may start right away).
        """
        if self.interrupted or self.done.is_set():
            return
        self.interrupted = True
        self.response.interrupt()
        self._stop_model()
        self._model.close_blocks(self.response.log.interrupted_fields()["heard_text"])

    def drop(self) -> None:
        """Stop an answer nothing of which was heard: it leaves no trace in the conversation (its question
        included: the caller went on, and the next turn asks it again, joined to what they added)."""
        if self.interrupted or self.done.is_set():
            return
        self.interrupted = True
        self._emit.silence()  # held: not one event of it was emitted, none will be
        self._model.pending_tool_ids = set()
        self.response.interrupt()
        self._stop_model()
        self._model.close_blocks("")
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
        self._model.cancel_pending_tools()  # now: the next answer's messages come after these
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
        pump = asyncio.create_task(self._delivery.pump(), name=f"pump-{answer_id}")
        self._model_task = asyncio.create_task(self._model.run(), name=f"model-{answer_id}")
        over = asyncio.create_task(self._delivery.speech_over.wait(), name=f"over-{answer_id}")
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
            self._model.close_blocks(heard)  # a no-op when the delivery closed them at ``interrupted``
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
