"""``WS /ws``: the app's spoken call (Leg 3 over WebSocket).

:func:`add_call_route` serves calls on the app: the door (``_admission``: the page's own origin, a cap on
calls), then one :class:`Call` per connection (``_call``): the adapter of the frame rules (``_frames``:
start, prompts, audio and its pacing, the idle timeout) and of the library's turn-taking core
(:mod:`strands_voice.turns`); its ears (``_listening``: the library's listener, a turn's times), one turn
answered (``_answers``: the answer's events out, its span, its metrics) and the frames out (``_outbox``).
"""

from __future__ import annotations

import logging

from bedrock_agentcore.runtime import BedrockAgentCoreApp, RequestContext
from starlette import status
from starlette.websockets import WebSocket

from ..answering import Answering
from ..config import call_recognizer_from_env, call_speculate_from_env
from ._admission import DEFAULT_MAX_CALLS, CallAdmission
from ._call import Call
from ._frames import MAX_FRAME_BYTES, CallFrames, CallLimits
from ._listening import CallListener, ListenerFactory, TurnClock, TurnTiming, default_listener_factory

__all__ = [
    "DEFAULT_MAX_CALLS",
    "MAX_FRAME_BYTES",
    "Call",
    "CallAdmission",
    "CallFrames",
    "CallLimits",
    "CallListener",
    "ListenerFactory",
    "TurnClock",
    "TurnTiming",
    "add_call_route",
    "default_listener_factory",
]

logger = logging.getLogger(__name__)


def add_call_route(
    app: BedrockAgentCoreApp,
    answering: Answering,
    listener_factory: ListenerFactory | None,
    limits: CallLimits | None,
    admission: CallAdmission | None = None,
) -> None:
    """Serve spoken calls on ``app``'s ``/ws`` (bedrock-agentcore's ``websocket`` decorator)."""
    factory = listener_factory or default_listener_factory(call_recognizer_from_env())
    door = admission or CallAdmission.from_env()

    @app.websocket
    async def call(websocket: WebSocket, context: RequestContext) -> None:
        if not door.origin_allowed(websocket.headers):
            logger.warning(
                "origin=<%r> | a call from a foreign page was refused", websocket.headers.get("origin")
            )
            await websocket.close(status.WS_1008_POLICY_VIOLATION)  # before accept: the handshake gets 403
            return
        await websocket.accept()
        if not door.enter():
            await websocket.close(status.WS_1013_TRY_AGAIN_LATER, "busy")
            return
        try:
            session_id = context.session_id or websocket.query_params.get("session_id")
            await Call(websocket, session_id, answering, factory, limits or _limits()).run()
        finally:
            door.leave()


def _limits() -> CallLimits:
    """The default limits, with ``CALL_SPECULATE``."""
    return CallLimits(speculate=call_speculate_from_env())
