"""``WS /ws``: one spoken call (Leg 3 over WebSocket), the thin asyncio adapter of two sans-I/O cores.

The call's frames go through :class:`~agentcore_app.call._frames.CallFrames` (start, prompts, audio,
pacing, the idle timeout); who speaks when is the library's turn-taking core,
:class:`~strands_voice.turns.TurnTaking`, fed the listener's events (:class:`strands_voice.listen.Listener`:
the VAD, the turn-end model, Whisper), the answers' progress, typed turns and the Stop button through the
library's :class:`~strands_voice.turns.TurnLoop`. The adapter holds no turn rule: it performs the cores'
actions. Each turn is answered by :class:`~agentcore_app.answering.Answering`, the same path as
``POST /invocations``, in the conversation of the call's session id. Out, one writer sends in order
(``_outbox.Outbox``): the answers' audio as binary frames and every other event as a JSON text frame;
``speech_paused`` jumps the queue (the player stops now).

Every task of a call (receiver, writer, turns, listener, answers) is tracked; when any of them ends the
call ends, and the rest are cancelled with a bound. An answer still speaking then is interrupted, so the
agent remembers what was heard.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any, Final

from starlette import status
from starlette.websockets import WebSocketState
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.call_events import CALL_SAMPLE_RATE, CallEvent, CallEventBuilder
from strands_voice_protocol.errors import MissingDependencyError

from agentcore_app.conversation import InvalidSessionIdError, one_off_session_id, validate_session_id
from strands_voice import VoiceCallbackHandler
from strands_voice.listen import ListenEvent, Transcript, TurnEnded
from strands_voice.turns import (
    AnswerEnded,
    AnswerSpeaking,
    DropAnswer,
    InterruptAnswer,
    PauseAnswer,
    ReleaseAnswer,
    ReportError,
    ResumeAnswer,
    ShowSpeechStart,
    ShowTranscript,
    StartAnswer,
    TurnAction,
    TurnInput,
    TurnLoop,
    TurnSettings,
    TurnTaking,
)

from ..answering import Answering
from . import _frames as frames
from ._answers import HeldAnswer, SpokenTurn, answer_turn
from ._listening import CallListener, ListenerFactory, TurnClock
from ._outbox import Outbox
from ._socket import CallSocket

__all__ = ["OUTBOX_FRAMES", "STOP_TIMEOUT_S", "Call"]

logger = logging.getLogger(__name__)

#: Seconds a call's tasks get to stop when it ends.
STOP_TIMEOUT_S: Final = 10.0
#: Frames waiting for the socket before the answer waits for the caller (backpressure).
OUTBOX_FRAMES: Final = 64


@dataclass
class LiveAnswer:
    """An answer of the call: its turn, its voice handler and its task."""

    turn: SpokenTurn
    voice: VoiceCallbackHandler
    task: asyncio.Task[None] | None = None
    held: HeldAnswer | None = None  # a speculation not yet released


class Call:
    """One spoken call (see the module docstring).

    Args:
        websocket: The caller's connection (accepted by the route): a ``/ws`` caller or a phone line.
        session_id: The conversation it names (None: a new one).
        answering: The app's answers.
        listener_factory: Opens the call's listener once ``start`` has come.
        limits: What the call accepts.
        turn_settings: How the caller's speech over an answer is decided.
    """

    def __init__(
        self,
        websocket: CallSocket,
        session_id: str | None,
        answering: Answering,
        listener_factory: ListenerFactory,
        limits: frames.CallLimits,
        turn_settings: TurnSettings | None = None,
    ) -> None:
        self.websocket = websocket
        self.session_id = session_id or one_off_session_id()
        self.answering = answering
        self.listener_factory = listener_factory
        self.frames = frames.CallFrames(limits, CallEventBuilder())
        core = TurnTaking(
            turn_settings
            or TurnSettings(max_prompt_chars=limits.max_prompt_chars, speculate=limits.speculate)
        )
        self.turns = TurnLoop(core, self._perform_turn, self._note)
        self.outbox = Outbox(OUTBOX_FRAMES)
        self.listener: CallListener | None = None
        self.answers: dict[str, LiveAnswer] = {}
        self.clock = TurnClock()
        self.close_code = status.WS_1000_NORMAL_CLOSURE
        self._tasks: set[asyncio.Task[Any]] = set()

    def _spawn(self, work: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def run(self) -> None:
        """Serve the call until the caller closes it, a limit ends it, or one of its tasks ends."""
        try:
            validate_session_id(self.session_id)
        except InvalidSessionIdError as error:
            await self._refuse(error.message)
            return
        logger.debug("session_id=<%s> | call opened", self.session_id)
        core = {
            asyncio.create_task(self._receive(), name="call-receiver"),
            asyncio.create_task(self._write(), name="call-writer"),
            asyncio.create_task(self.turns.run(), name="call-turns"),
        }
        try:
            done, _ = await asyncio.wait(core, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    logger.error(
                        "session_id=<%s> | a call task failed", self.session_id, exc_info=task.exception()
                    )
        finally:
            await self._end(core)

    async def _refuse(self, message: str) -> None:
        await self.websocket.send_text(
            json.dumps(self.frames.builder.error(code="invalid_request", message=message))
        )
        await self.websocket.close(status.WS_1008_POLICY_VIOLATION)

    # --- the caller's frames --------------------------------------------------------------------------

    async def _receive(self) -> None:
        idle_s = self.frames.limits.idle_s
        loop = asyncio.get_running_loop()
        while self.frames.phase is not frames.CallPhase.CLOSED:
            event: frames.FrameInput
            try:
                message = await asyncio.wait_for(self.websocket.receive(), idle_s)
            except TimeoutError:
                event = frames.Stalled()
            else:
                if message["type"] == "websocket.disconnect":
                    return
                data = message.get("bytes")
                event = (
                    frames.AudioFrame(data)
                    if data is not None
                    else frames.TextFrame(message.get("text") or "")
                )
            await self._perform_frames(self.frames.handle(event, loop.time()))

    async def _perform_frames(self, actions: list[frames.FrameAction]) -> None:
        for action in actions:
            if isinstance(action, frames.SendEvent):
                await self.send(action.event)
            elif isinstance(action, frames.Feed) and self.listener is not None:
                self.clock.fed(len(action.pcm))
                await self.listener.feed(action.pcm)
            elif isinstance(action, frames.Listen):
                await self._listen(action)
            elif isinstance(action, frames.ToTurns):
                self.turns.put(action.event)
            elif isinstance(action, frames.Wait):
                await asyncio.sleep(max(0.0, action.until - asyncio.get_running_loop().time()))
            elif isinstance(action, frames.CloseCall):
                self.close_code = action.code

    async def send(self, event: CallEvent) -> None:
        """One event out as a JSON text frame (ASCII-escaped JSON: any text, valid UTF-8)."""
        await self.outbox.put(json.dumps(event))

    async def _listen(self, action: frames.Listen) -> None:
        builder, rate, lang = self.frames.builder, CALL_SAMPLE_RATE, action.start.listen_lang
        if not action.hears:  # typed turns only (the error was sent)
            await self.send(builder.listening(sample_rate=rate, session_id=self.session_id))
            return
        self.turns.core.settings = dataclasses.replace(self.turns.core.settings, language=lang)
        try:
            self.listener = await self.listener_factory(action.start)
        except MissingDependencyError as error:
            logger.warning("error=<%s> | the call cannot listen", error)
            await self.send(
                self.frames.builder.error(code="internal", message=f"this app cannot listen: {error}")
            )
            self.frames.close()
            self.close_code = status.WS_1011_INTERNAL_ERROR
            return
        self._spawn(self._hear(self.listener), "call-listener")
        await self.send(builder.listening(sample_rate=rate, session_id=self.session_id, listen_lang=lang))

    async def _hear(self, listener: CallListener) -> None:
        async for event in listener.events():
            self.turns.put(event)

    # --- who speaks when ------------------------------------------------------------------------------

    def _note(self, event: TurnInput) -> None:
        """The turn's times, and the call's activity (a call is idle only without speech or answers)."""
        if isinstance(event, TurnEnded):
            self.clock.turn_ended(event.speech_end_s)
        elif isinstance(event, Transcript) and event.final:
            self.clock.recognized(event.end_of_turn)
        if isinstance(event, ListenEvent | AnswerSpeaking | AnswerEnded):
            self.frames.active(answering=bool(self.answers))

    async def _perform_turn(self, action: TurnAction) -> None:
        builder = self.frames.builder
        if isinstance(action, StartAnswer):
            self._answer(action)
        elif isinstance(action, ReleaseAnswer):
            self._release(action)
        elif isinstance(action, PauseAnswer | ResumeAnswer):
            self._hold(action)
        elif isinstance(action, InterruptAnswer | DropAnswer):
            self._stop(action)
        elif isinstance(action, ShowSpeechStart):
            await self.send(builder.speech_start(at_s=action.at_s))
        elif isinstance(action, ShowTranscript):
            counts = action.counts or not action.final  # a partial is not judged yet
            shown = builder.transcript(text=action.text, final=action.final, counts=counts, **_why(action))
            await self.send(shown)
        elif isinstance(action, ReportError):
            await self.send(builder.error(code=action.code, message=action.message))

    def _answer(self, action: StartAnswer) -> None:
        assert self.frames.start is not None  # answers come after start (the frames' table says so)
        timing = self.clock.take_turn() if action.spoken and not action.held else None
        turn = SpokenTurn(action.prompt, action.spoken, uuid.uuid4().hex, timing)
        live = LiveAnswer(turn, self.answering.new_handler(), held=HeldAnswer() if action.held else None)
        self.answers[action.answer_id] = live
        self.frames.active(answering=True)  # thinking counts as answering: not idle
        live.task = self._spawn(self._answer_turn(action.answer_id, live), "call-answer")

    async def _answer_turn(self, answer_id: str, live: LiveAnswer) -> None:
        assert self.frames.start is not None
        try:
            heard = lambda: self._heard(answer_id)  # noqa: E731 (one line: the answer's first audio went out)
            await answer_turn(self, live.turn, live.voice, self.frames.start.options, heard, live.held)
        finally:
            live.voice.close()
            self.answers.pop(answer_id, None)
            self.turns.put(AnswerEnded(answer_id))
            if self.listener is not None and not self.answers:
                self.listener.agent_speaking = False

    def _heard(self, answer_id: str) -> None:
        if self.listener is not None:
            self.listener.agent_speaking = True
        self.turns.put(AnswerSpeaking(answer_id))

    def _release(self, action: ReleaseAnswer) -> None:
        """The turn ended with a speculation's words: it goes out, timed as that turn's answer."""
        live = self.answers.get(action.answer_id)
        if live is not None and live.held is not None:
            live.held.release(self.clock.take_turn())

    def _hold(self, action: PauseAnswer | ResumeAnswer) -> None:
        live = self.answers.get(action.answer_id)
        if live is None:
            return
        paused = isinstance(action, PauseAnswer)
        live.voice.pause() if paused else live.voice.resume()
        rid, heard_ms, builder = live.turn.request_id, live.voice.heard_ms or 0.0, self.frames.builder
        event = (
            builder.speech_paused(request_id=rid, heard_ms=heard_ms)
            if paused
            else builder.speech_resumed(request_id=rid, heard_ms=heard_ms)
        )
        self.outbox.put_urgent(json.dumps(event))

    def _stop(self, action: InterruptAnswer | DropAnswer) -> None:
        """Barge in (the heard part is remembered) or drop an answer not yet heard (its turn joins the
        next one: the core's); its audio not yet sent will never be heard."""
        live = self.answers.get(action.answer_id)
        if live is None or live.task is None or live.task.done():
            return
        logger.debug("session_id=<%s>, action=<%s> | answer stopped", self.session_id, type(action).__name__)
        if isinstance(action, DropAnswer):
            # Nothing of it was heard: the agent forgets it (no answer, no question: the next turn asks).
            live.voice.drop()
            if live.held is not None and not live.held.released.is_set():
                live.task.cancel()  # a speculation: nothing of it was sent, nothing will be
                return
        if not live.voice.interrupt():
            live.task.cancel()  # its agent has not begun: nothing to keep
        self.outbox.drop_audio()

    def confirm_played(self, request_id: str, sentence: int) -> None:
        """The caller's player has played that answer's ``sentence`` to its end (a phone's mark)."""
        for live in self.answers.values():
            if live.turn.request_id == request_id:
                live.voice.confirm_played(sentence)

    # --- the end --------------------------------------------------------------------------------------

    async def _write(self) -> None:
        """The one writer: frames go out in the order they were queued (the urgent first)."""
        while (item := await self.outbox.get()) is not None:
            if isinstance(item, bytes):
                await self.websocket.send_bytes(item)
            else:
                await self.websocket.send_text(item)

    async def _end(self, core: set[asyncio.Task[Any]]) -> None:
        """Interrupt the answers speaking (the heard part is remembered), stop every task, close."""
        for live in list(self.answers.values()):
            if not live.voice.interrupt() and live.task is not None:
                live.task.cancel()
        writer = next(task for task in core if task.get_name() == "call-writer")
        await cancel_and_wait(set(self._tasks) | (core - {writer}), STOP_TIMEOUT_S, log_failures=True)
        if self.listener is not None:
            await self.listener.aclose()
        if not writer.done():
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


def _why(action: ShowTranscript) -> dict[str, Any]:
    """The ``end_of_turn`` field of a final transcript (none on a partial)."""
    if action.end_of_turn is None:
        return {}
    why: dict[str, Any] = {"by": action.end_of_turn.by}
    if action.end_of_turn.p is not None:
        why["p"] = round(action.end_of_turn.p, 3)
    return {"end_of_turn": why}
