"""The AgentCore voice app: a Strands agent whose answer streams as text and speech over SSE (Leg 3).

``POST /invocations`` takes ``{"prompt", "mode"?, "voice"?, "speed"?, "format"?}`` and streams PROTOCOL.md
Leg 3 events, each framed as ``data: {json}\\n\\n`` (:mod:`agentcore_app.streaming`). A bad payload is
answered with 400 and one ``error`` event as the JSON body; a body that is not ``application/json`` with
415, one over ``max_body_bytes`` with 413 (read no further). ``GET /ping`` is the runtime's health check,
``GET /`` the browser page (``static/index.html``) and ``/static/...`` its files. ``WS /ws`` is a spoken
call (Leg 3 over WebSocket, :mod:`agentcore_app.call`): the caller's microphone in, the answers' audio out
as binary frames, through the same answers (:mod:`agentcore_app.answering`) and conversations.

An invocation with an AgentCore session id (``X-Amzn-Bedrock-AgentCore-Runtime-Session-Id``) continues that
session's conversation (:mod:`agentcore_app.conversation`, stored as its ``ConversationStore``
says); without one it is a conversation of its own. Every invocation gets a fresh
:class:`~strands_voice.VoiceCallbackHandler`; the payload's ``mode``, ``voice``, ``speed`` and
``format`` reach it per request. The handler's ``stream()`` yields the Leg 3 events (``text_delta`` from the
token stream, the speech events from the handler) from one queue in arrival order. A new invocation on a
session whose answer is still speaking barges in on it first. When the caller disconnects mid-answer, or
posts ``{"action": "interrupt"}`` for its session (the Stop button; docs/PROTOCOL.md), the app calls
``handler.interrupt()`` (barge-in: the endpoint gets a Leg 1 ``cancel``, the agent is cancelled and
remembers what was heard), then the answer stops: its tasks are cancelled, its TTS session closed.

Only bedrock-agentcore's public API is used: the ``entrypoint`` and ``websocket`` decorators, the
constructor's ``middleware``, the ``RequestContext`` and ``BedrockAgentCoreContext``, and a ``Response``
returned by the entrypoint, which the runtime passes through unchanged.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bedrock_agentcore.runtime import BedrockAgentCoreApp, BedrockAgentCoreContext, RequestContext
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Lifespan
from strands import Agent
from strands.models import Model

from agentcore_app.conversation import Conversations, ConversationStore, validate_session_id
from agentcore_app.models import close_model, create_model
from strands_voice.speech import TransportFactory

from .answering import Answering
from .call import CallAdmission, CallLimits, ListenerFactory, add_call_route
from .config import (
    model_spec_from_env,
    normalize_tts_url,
    silence_timeout_from_env,
    system_prompt_from_env,
    tts_url_from_env,
)
from .metrics import AnswerMetrics, metrics_from_env
from .payload import MAX_PROMPT_CHARS, PayloadError, parse_payload
from .streaming import MAX_BODY_BYTES, JsonBodyGuard, StoppingStreamingResponse, error_event, sse_frames

__all__ = ["STATIC_DIR", "create_app"]

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"


def create_app(
    *,
    tts_url: str | None = None,
    silence_timeout: float | None = None,
    transport_factory: TransportFactory | None = None,
    model: str | Model | None = None,
    system_prompt: str | None = None,
    max_prompt_chars: int = MAX_PROMPT_CHARS,
    max_body_bytes: int = MAX_BODY_BYTES,
    conversation_store: ConversationStore | None = None,
    listener_factory: ListenerFactory | None = None,
    call_limits: CallLimits | None = None,
    call_admission: CallAdmission | None = None,
    static_dir: str | Path | None = None,
    metrics: AnswerMetrics | None = None,
) -> BedrockAgentCoreApp:
    """Build the app.

    Args:
        tts_url: The TTS endpoint URL; ``TTS_ENDPOINT_URL`` when None.
        silence_timeout: Seconds the TTS endpoint may stay silent while audio is owed before speech is
            given up (an ``error`` event); ``TTS_SILENCE_TIMEOUT_S`` or 20 s when None. A CPU endpoint on
            a busy machine needs more.
        transport_factory: Creates the TTS transports instead of ``tts_url`` (tests).
        model: A model spec (see :mod:`agentcore_app.models`) or a Strands model; from the environment when
            None (``VOICE_MODEL``, ``BEDROCK_MODEL_ID``, else Bedrock with credentials, scripted without).
        system_prompt: The agent's system prompt; ``SYSTEM_PROMPT`` or a voice-friendly default when None.
        max_prompt_chars: The longest prompt accepted.
        max_body_bytes: The largest ``POST`` body read (larger: 413, refused before it is read whole).
        conversation_store: Where session conversations are kept; ``CONVERSATION_*`` when None.
        listener_factory: Opens a spoken call's listener (``/ws``); the library's
            :class:`~strands_voice.listen.Listener` (VAD and Whisper) when None.
        call_limits: What a spoken call accepts (:class:`~agentcore_app.call.CallLimits`).
        call_admission: Who may open a call, and how many at once
            (:class:`~agentcore_app.call.CallAdmission`); ``CALL_ALLOWED_ORIGINS`` and ``CALL_MAX_CALLS``
            when None.
        static_dir: Where the browser page lives; the package's ``static/`` folder when None.
        metrics: Where each answer's figures go (:mod:`agentcore_app.metrics`); None: as
            ``AGENT_METRICS`` says (off unless ``emf``).

    Returns:
        The app, ready for uvicorn (``/invocations``, ``/ws``, ``/ping``, ``/``, ``/static``).

    Raises:
        ConfigurationError: No TTS URL given and ``TTS_ENDPOINT_URL`` unset, or the URL is malformed.
        ModelSpecError: The model spec is malformed.
        MissingDependencyError: The chosen model provider's extra is not installed.
    """
    resolved_url = tts_url_from_env() if tts_url is None else normalize_tts_url(tts_url)
    resolved_prompt = system_prompt_from_env() if system_prompt is None else system_prompt
    if model is None:
        model = model_spec_from_env()
    resolved_silence = silence_timeout_from_env() if silence_timeout is None else silence_timeout
    answer_metrics = metrics if metrics is not None else metrics_from_env()
    # One model for every request: a Strands model holds no conversation; the agent does.
    shared_model = create_model(model) if isinstance(model, str) else model
    store = ConversationStore.from_env() if conversation_store is None else conversation_store

    def make_agent(**conversation: Any) -> Agent:
        # The voice handler joins each run (handler.stream composes it); the agent outlives it.
        return Agent(model=shared_model, system_prompt=resolved_prompt, callback_handler=None, **conversation)

    conversations = Conversations(store, make_agent)
    answering = Answering(conversations, resolved_url, resolved_silence, transport_factory, answer_metrics)
    app = BedrockAgentCoreApp(
        lifespan=_closing(shared_model if isinstance(model, str) else None),
        middleware=[Middleware(JsonBodyGuard, max_body_bytes=max_body_bytes)],
    )
    app.state.conversations = conversations

    _add_invocations(app, answering, max_prompt_chars)
    add_call_route(app, answering, listener_factory, call_limits, call_admission)
    _add_pages(app, Path(static_dir) if static_dir is not None else STATIC_DIR)
    return app


def _closing(model: Model | None) -> Lifespan[BedrockAgentCoreApp]:
    """The app's lifespan: at shutdown, the model the app made lets go of its client (its connections)."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: BedrockAgentCoreApp) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await close_model(model)

    return lifespan


def _add_invocations(app: BedrockAgentCoreApp, answering: Answering, max_prompt_chars: int) -> None:
    """``POST /invocations``: one answer as SSE, or ``{"action": "interrupt"}`` (see the module docstring)."""

    # The entrypoint returns its own Response, which bedrock-agentcore passes through (public behaviour):
    # the answer streams on the server's own loop, where a caller's disconnect stops it at once. (An
    # async generator handed to the runtime is bridged through a worker loop and a thread blocked on the
    # next event, which cannot be stopped until that event comes.) A plain function: it only validates
    # and builds the response, in the runtime's thread pool.
    @app.entrypoint
    def invoke(payload: Any, context: RequestContext) -> Response:
        session_id = context.session_id
        try:
            if session_id is not None:
                validate_session_id(session_id)
            if isinstance(payload, dict) and payload.get("action") == "interrupt":
                return _interrupt(answering.conversations, session_id, payload.get("request_id"))
            request = parse_payload(payload, max_prompt_chars=max_prompt_chars)
        except PayloadError as error:  # InvalidSessionIdError too
            return JSONResponse(error_event("invalid_request", error.message), status_code=400)
        request_id = BedrockAgentCoreContext.get_request_id()
        logger.debug(
            "request_id=<%s>, session_id=<%s>, mode=<%s> | invocation",
            request_id,
            context.session_id,
            request.options.mode,
        )
        voice = answering.new_handler()
        answer = answering.answer(request, request_id, session_id, voice)
        # The caller hangs up mid-answer: barge in (Leg 1 cancel, undelivered audio dropped), then stop.
        return StoppingStreamingResponse(sse_frames(answer), on_disconnect=voice.interrupt)


def _interrupt(conversations: Conversations, session_id: str | None, request_id: Any) -> Response:
    """``{"action": "interrupt", "request_id"?}``: barge in on the session's answer (the Stop button)."""
    if session_id is None:
        message = "interrupt needs the X-Amzn-Bedrock-AgentCore-Runtime-Session-Id header"
        return JSONResponse(error_event("invalid_request", message), status_code=400)
    if request_id is not None and not isinstance(request_id, str):
        return JSONResponse(error_event("invalid_request", "'request_id' must be a string"), 400)
    interrupted = conversations.interrupt(session_id, request_id)
    logger.debug("session_id=<%s>, interrupted=<%s> | interrupt action", session_id, interrupted)
    return JSONResponse({"type": "interrupt_result", "interrupted": interrupted})


def _add_pages(app: BedrockAgentCoreApp, pages: Path) -> None:
    """``GET /`` (the browser page, or 404 when none is installed) and ``/static`` from ``pages``."""

    async def index(_request: Request) -> Response:
        page = pages / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html; charset=utf-8")
        return PlainTextResponse("This app has no browser page installed.", status_code=404)

    app.router.routes.append(Route("/", index, methods=["GET"]))
    if pages.is_dir():
        app.router.routes.append(Mount("/static", app=StaticFiles(directory=pages), name="static"))
