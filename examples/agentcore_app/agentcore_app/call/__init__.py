"""``WS /ws``: the app's spoken call (Leg 3 over WebSocket).

:func:`add_call_route` serves calls on the app: the door (``_admission``: the page's own origin, a cap on
calls), then one :class:`Call` per connection (``_call``): the adapter of the frame rules (``_frames``:
start, prompts, audio and its pacing, the idle timeout) and of the library's turn-taking core
(:mod:`strands_voice.turns`); its ears (``_listening``: the library's listener, a turn's times), one turn
answered (``_answers``: the answer's events out, its span, its metrics) and the frames out (``_outbox``).

Phone calls (Twilio Media Streams) are the same :class:`Call` on another connection (``_socket``: what a
call needs of one): ``_phone`` (:class:`PhoneLine`: Twilio's frames through the protocol's codec, the
audio converted) with ``_phone_playback`` (what the phone plays: media, marks, ``clear``). They come on
``/twilio``, or on ``/ws`` (the only route AgentCore forwards), told from a Leg 3 caller by their first
frame: JSON with an ``event`` field (``connected`` or ``start``) instead of ``{"type": "start"}``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import MutableMapping
from typing import Any, Final

from bedrock_agentcore.runtime import BedrockAgentCoreApp, RequestContext
from starlette import status
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from strands_voice_protocol.telephony import twilio

from agentcore_app.conversation import InvalidSessionIdError, one_off_session_id, validate_session_id

from ..answering import Answering
from ..config import call_recognizer_from_env, call_speculate_from_env
from ._admission import CALLS_PER_CORE, DEFAULT_MAX_CALLS, CallAdmission, busy_reason, default_max_calls
from ._call import Call
from ._frames import MAX_FRAME_BYTES, CallFrames, CallLimits
from ._listening import CallListener, ListenerFactory, TurnClock, TurnTiming, default_listener_factory
from ._phone import PhoneLine
from ._socket import CallSocket, Replayed

__all__ = [
    "CALLS_PER_CORE",
    "DEFAULT_MAX_CALLS",
    "MAX_FRAME_BYTES",
    "TWILIO_PATH",
    "Call",
    "CallAdmission",
    "CallFrames",
    "CallLimits",
    "CallListener",
    "CallSocket",
    "ListenerFactory",
    "PhoneLine",
    "TurnClock",
    "TurnTiming",
    "add_call_route",
    "busy_reason",
    "default_listener_factory",
    "default_max_calls",
]

logger = logging.getLogger(__name__)

#: The phone line's route (Twilio Media Streams; ``/ws`` takes them too, told by their first frame).
TWILIO_PATH: Final = "/twilio"


def add_call_route(
    app: BedrockAgentCoreApp,
    answering: Answering,
    listener_factory: ListenerFactory | None,
    limits: CallLimits | None,
    admission: CallAdmission | None = None,
) -> None:
    """Serve spoken calls on ``app``'s ``/ws`` (bedrock-agentcore's ``websocket`` decorator: a Leg 3
    caller, or a Twilio stream told by its first frame) and phone calls on ``/twilio``."""
    factory = listener_factory or default_listener_factory(call_recognizer_from_env())
    door = admission or CallAdmission.from_env()
    call_limits = limits or _limits()

    @app.websocket
    async def call(websocket: WebSocket, context: RequestContext) -> None:
        if not await _admitted(websocket, door):
            return
        try:
            session_id = context.session_id or websocket.query_params.get("session_id")
            if not _valid(session_id):  # refused at once, before any frame (the call says why)
                await Call(websocket, session_id, answering, factory, call_limits).run()
                return
            try:
                first: MutableMapping[str, Any] | None = await asyncio.wait_for(
                    websocket.receive(), call_limits.idle_s
                )
            except TimeoutError:
                first = None  # the call's idle rule answers it
            text = first.get("text") if first is not None else None
            if isinstance(text, str) and twilio.is_media_stream_frame(text):
                await _phone_call(websocket, text, session_id, answering, factory, call_limits)
            elif first is None or first["type"] != "websocket.disconnect":
                await Call(Replayed(websocket, first), session_id, answering, factory, call_limits).run()
        finally:
            door.leave()

    async def phone(websocket: WebSocket) -> None:
        if not await _admitted(websocket, door):
            return
        try:
            await _phone_call(websocket, None, None, answering, factory, call_limits)
        finally:
            door.leave()

    app.router.routes.append(WebSocketRoute(TWILIO_PATH, phone))


def _valid(session_id: str | None) -> bool:
    try:
        validate_session_id(session_id or one_off_session_id())
    except InvalidSessionIdError:
        return False
    return True


async def _admitted(websocket: WebSocket, door: CallAdmission) -> bool:
    """Let the call in (accepted and counted: the caller must :meth:`CallAdmission.leave`), or refuse it."""
    if not door.origin_allowed(websocket.headers):
        logger.warning(
            "origin=<%r> | a call from a foreign page was refused", websocket.headers.get("origin")
        )
        await websocket.close(status.WS_1008_POLICY_VIOLATION)  # before accept: the handshake gets 403
        return False
    await websocket.accept()
    if not door.enter():
        logger.info("calls=<%d> | a call past the cap was refused", door.open_calls)
        await websocket.close(status.WS_1013_TRY_AGAIN_LATER, busy_reason(door.max_calls))
        return False
    return True


async def _phone_call(
    websocket: WebSocket,
    first: str | None,
    session_id: str | None,
    answering: Answering,
    factory: ListenerFactory,
    limits: CallLimits,
) -> None:
    """A Twilio stream (``first``: its first frame, already read): the call once it has started; the
    stream's ``session_id`` parameter names the conversation, else ``session_id`` (``/ws``'s own)."""
    line = await PhoneLine.answer(websocket, first, limits.idle_s)
    if line is not None:
        call = Call(line, line.session_id or session_id, answering, factory, limits)
        line.on_played = call.confirm_played
        await call.run()


def _limits() -> CallLimits:
    """The default limits, with ``CALL_SPECULATE``."""
    return CallLimits(speculate=call_speculate_from_env())
