"""``WS /ws``: a spoken call (Leg 3 over WebSocket), the thin asyncio adapter over :mod:`.call_core`.

One :class:`Call` per connection. Its receive loop hands each frame to the call's
:class:`~agentcore_app.call_core.CallCore` and performs the actions it answers with; the listener
(:class:`strands_voice.listen.Listener`: the library's VAD, end of turn and Whisper) hears the caller's
audio and its events go through the same core; each turn is answered by
:class:`~agentcore_app.answering.Answering`, the same path as ``POST /invocations``, in the conversation of
the call's session id (the AgentCore header, or ``?session_id=`` for a browser; a call without one gets a
fresh id, said in ``listening``). Out, one writer task sends in order: the answers' audio as binary
frames (the raw bytes of the call's format) and every other event as a JSON text frame.

Every task of a call (writer, listener, answers) is tracked and cancelled with a bound when the call
ends; an answer still speaking then is interrupted, so the agent remembers what was heard.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Final

from bedrock_agentcore.runtime import BedrockAgentCoreApp, RequestContext
from starlette import status
from starlette.websockets import WebSocket, WebSocketState
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.call_events import CALL_SAMPLE_RATE, CallEvent, CallEventBuilder
from strands_voice_protocol.errors import MissingDependencyError

from agentcore_app.conversation_store import InvalidSessionIdError, validate_session_id
from strands_voice.agent import VoiceCallbackHandler

from . import call_core
from .answering import Answering
from .call_listening import CallListener, ListenerFactory, TurnClock, default_listener_factory, heard
from .call_turns import SpokenTurn, answer_turn
from .config import call_recognizer_from_env

__all__ = ["Call", "CallListener", "ListenerFactory", "add_call_route"]

logger = logging.getLogger(__name__)

#: Seconds a call's tasks get to stop when it ends.
STOP_TIMEOUT_S: Final = 10.0
#: Frames waiting for the socket before the answer waits for the caller (backpressure).
OUTBOX_FRAMES: Final = 64


def add_call_route(
    app: BedrockAgentCoreApp,
    answering: Answering,
    listener_factory: ListenerFactory | None,
    limits: call_core.CallLimits | None,
) -> None:
    """Serve spoken calls on ``app``'s ``/ws`` (bedrock-agentcore's ``websocket`` decorator)."""
    factory = listener_factory or default_listener_factory(call_recognizer_from_env())

    @app.websocket
    async def call(websocket: WebSocket, context: RequestContext) -> None:
        session_id = context.session_id or websocket.query_params.get("session_id")
        await Call(websocket, session_id, answering, factory, limits or call_core.CallLimits()).run()


@dataclass
class LiveAnswer:
    """An answer of the call: its turn, its voice handler and its task."""

    turn: SpokenTurn
    voice: VoiceCallbackHandler
    task: asyncio.Task[None] | None = None


class Call:
    """One spoken call (see the module docstring).

    Args:
        websocket: The caller's connection (not yet accepted).
        session_id: The conversation it names (None: a new one).
        answering: The app's answers.
        listener_factory: Opens the call's listener once ``start`` has come.
        limits: What the call accepts.
    """

    def __init__(
        self,
        websocket: WebSocket,
        session_id: str | None,
        answering: Answering,
        listener_factory: ListenerFactory,
        limits: call_core.CallLimits,
    ) -> None:
        self.websocket = websocket
        self.session_id = session_id or f"call-{uuid.uuid4().hex}"
        self.answering = answering
        self.listener_factory = listener_factory
        self.core = call_core.CallCore(limits, CallEventBuilder())
        self.outbox: asyncio.Queue[str | bytes | None] = asyncio.Queue(OUTBOX_FRAMES)
        self.listener: CallListener | None = None
        self.live: LiveAnswer | None = None  # the latest answer: speaking, or about to
        # A spoken turn stopped before its answer began: the next answer takes its words (never lost).
        self._unanswered: SpokenTurn | None = None
        self.clock = TurnClock()
        self.close_code = status.WS_1000_NORMAL_CLOSURE
        self._tasks: set[asyncio.Task[Any]] = set()

    def _spawn(self, work: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run(self) -> None:
        """Serve the call until the caller closes it or a limit ends it."""
        await self.websocket.accept()
        try:
            validate_session_id(self.session_id)
        except InvalidSessionIdError as error:
            await self._refuse(error.message)
            return
        writer = asyncio.create_task(self._write(), name="call-writer")
        logger.debug("session_id=<%s> | call opened", self.session_id)
        try:
            await self._receive()
        finally:
            await self._end(writer)

    async def _refuse(self, message: str) -> None:
        await self.websocket.send_text(
            json.dumps(self.core.builder.error(code="invalid_request", message=message))
        )
        await self.websocket.close(status.WS_1008_POLICY_VIOLATION)

    async def _receive(self) -> None:
        idle_s = self.core.limits.idle_s
        while self.core.phase is not call_core.Phase.CLOSED:
            event: call_core.CallInput
            try:
                message = await asyncio.wait_for(self.websocket.receive(), idle_s)
            except TimeoutError:
                event = call_core.Stalled()
            else:
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("bytes")
                event = (
                    call_core.AudioFrame(data)
                    if data is not None
                    else call_core.TextFrame(message.get("text") or "")
                )
            await self.perform(self.core.handle(event))

    async def perform(self, actions: list[call_core.CallAction]) -> None:
        """Do what the core asked, in order."""
        for action in actions:
            if isinstance(action, call_core.Send):
                await self.send(action.event)
            elif isinstance(action, call_core.Feed) and self.listener is not None:
                self.clock.fed(len(action.pcm))
                await self.listener.feed(action.pcm)
            elif isinstance(action, call_core.Listen):
                await self._listen(action)
            elif isinstance(action, call_core.Answer):
                self._answer(action)
            elif isinstance(action, call_core.Interrupt):
                self._interrupt()
            elif isinstance(action, call_core.Close):
                self.close_code = action.code

    async def send(self, event: CallEvent) -> None:
        """One event out as a JSON text frame (ASCII-escaped JSON: any text, valid UTF-8)."""
        await self.outbox.put(json.dumps(event))

    async def _listen(self, action: call_core.Listen) -> None:
        try:
            self.listener = await self.listener_factory(action.start)
        except MissingDependencyError as error:
            logger.warning("error=<%s> | the call cannot listen", error)
            await self.send(
                self.core.builder.error(code="internal", message=f"this app cannot listen: {error}")
            )
            self.core.phase = call_core.Phase.CLOSED
            self.close_code = status.WS_1011_INTERNAL_ERROR
            return
        self._spawn(self._hear(self.listener), "call-listener")
        await self.send(self.core.builder.listening(sample_rate=CALL_SAMPLE_RATE, session_id=self.session_id))

    async def _hear(self, listener: CallListener) -> None:
        async for event in listener.events():
            heard_event = heard(event, self.clock)
            if heard_event is not None:
                await self.perform(self.core.handle(heard_event))

    def _interrupt(self) -> None:
        """Barge in on the latest answer: stop its speech (the heard part is remembered) or, when it has
        not begun (its agent not yet running), drop it; its words then open the next turn."""
        live = self.live
        if live is None or live.task is None or live.task.done():
            return
        logger.debug("session_id=<%s>, speaking=<%s> | barge-in", self.session_id, live.voice.speaking)
        if live.voice.speaking:
            live.voice.interrupt()
            self._drop_queued_audio()
        else:
            live.task.cancel()
            self._unanswered = live.turn if live.turn.spoken else None

    def _drop_queued_audio(self) -> None:
        """Barge-in: the answer's audio not yet sent will never be heard; its events still go, in order."""
        kept = []
        while not self.outbox.empty():
            item = self.outbox.get_nowait()
            if not isinstance(item, bytes):
                kept.append(item)
        for item in kept:
            self.outbox.put_nowait(item)

    def _answer(self, action: call_core.Answer) -> None:
        assert self.core.start is not None  # an answer needs start (the core's table says so)
        prompt = action.prompt
        if self._unanswered is not None and action.spoken:
            # The caller paused mid-question and went on before the answer began: one question.
            prompt = f"{self._unanswered.prompt} {prompt}"
        self._unanswered = None
        timing = self.clock.take_turn() if action.spoken else None
        live = LiveAnswer(SpokenTurn(prompt, action.spoken, timing), self.answering.voice())
        live.task = self._spawn(self._answer_turn(live), "call-answer")
        self.live = live

    async def _answer_turn(self, live: LiveAnswer) -> None:
        assert self.core.start is not None
        try:
            await answer_turn(self, live.turn, live.voice, self.core.start.options)
        finally:
            live.voice.close()
            if self.live is live:
                self.live = None
            await self.perform(self.core.handle(call_core.AnswerEnded()))

    async def _write(self) -> None:
        """The one writer: frames go out in the order they were queued."""
        while (item := await self.outbox.get()) is not None:
            if isinstance(item, bytes):
                await self.websocket.send_bytes(item)
            else:
                await self.websocket.send_text(item)

    async def _end(self, writer: asyncio.Task[None]) -> None:
        """Interrupt the answer speaking (the heard part is remembered), stop every task, close."""
        self._interrupt()
        await cancel_and_wait(set(self._tasks), STOP_TIMEOUT_S, log_failures=True)
        if self.listener is not None:
            await self.listener.aclose()
        try:
            await asyncio.wait_for(self.outbox.put(None), STOP_TIMEOUT_S)
            await asyncio.wait_for(asyncio.shield(writer), STOP_TIMEOUT_S)
        except (TimeoutError, OSError, RuntimeError):
            logger.debug("session_id=<%s> | the call's last frames were not sent", self.session_id)
        await cancel_and_wait([writer], STOP_TIMEOUT_S)
        if self.websocket.application_state is not WebSocketState.DISCONNECTED:
            try:
                await self.websocket.close(self.close_code)
            except (OSError, RuntimeError):
                pass  # the caller already went
        logger.debug("session_id=<%s> | call ended", self.session_id)
