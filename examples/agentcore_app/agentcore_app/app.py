"""The AgentCore voice app: a Strands agent whose answer streams as text and speech over SSE (Leg 3).

``POST /invocations`` takes ``{"prompt", "mode"?, "voice"?, "speed"?, "format"?}`` and streams PROTOCOL.md
Leg 3 events, each framed by the runtime as ``data: {json}\\n\\n``. A bad payload is answered with 400 and
one ``error`` event as the JSON body. ``GET /ping`` is the runtime's health check, ``GET /`` the browser
page (``static/index.html``) and ``/static/...`` its files.

An invocation with an AgentCore session id (``X-Amzn-Bedrock-AgentCore-Runtime-Session-Id``) continues that
session's conversation (:mod:`agentcore_app.conversations`, stored as :mod:`agentcore_app.conversation_store`
says); without one it is a conversation of its own. Every invocation gets a fresh
:class:`~strands_voice.handler.VoiceCallbackHandler`; the payload's ``mode``, ``voice``, ``speed`` and
``format`` reach it per request. The handler's ``stream()`` yields the Leg 3 events (``text_delta`` from the
token stream, the speech events from the handler) from one queue in arrival order. A new invocation on a
session whose answer is still speaking barges in on it first. When the caller disconnects mid-answer, or
posts ``{"action": "interrupt"}`` for its session (the Stop button; docs/PROTOCOL.md), the app calls
``handler.interrupt()`` (barge-in: the endpoint gets a Leg 1 ``cancel``, the agent is cancelled and
remembers what was heard), then the answer stops: its tasks are cancelled, its TTS session closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import anyio
from bedrock_agentcore.runtime import BedrockAgentCoreApp, BedrockAgentCoreContext
from bedrock_agentcore.runtime.context import RequestContext
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from strands import Agent
from strands.models import Model
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import TextEncodingError
from strands_voice_protocol.events import ErrorEvent, Event, EventBuilder
from strands_voice_protocol.sse import encode_sse

from agentcore_app.conversation_store import ConversationStore, validate_session_id
from agentcore_app.conversations import Conversations, SessionBusyError
from agentcore_app.models import create_model
from strands_voice.handler import VoiceCallbackHandler
from strands_voice.options import TransportFactory

from .config import (
    model_spec_from_env,
    normalize_tts_url,
    silence_timeout_from_env,
    system_prompt_from_env,
    tts_url_from_env,
)
from .metrics import AnswerMetrics, measured, metrics_from_env
from .payload import MAX_PROMPT_CHARS, PayloadError, VoiceRequest, parse_payload

__all__ = ["STATIC_DIR", "VoiceAgentCoreApp", "create_app", "error_event"]

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"

#: Seconds the answer's tasks get to stop (and its TTS session to close) once the caller has gone.
_STOP_TIMEOUT_S: Final = 10.0


def error_event(code: str, message: str) -> ErrorEvent:
    """A Leg 3 ``error`` event for an invocation refused before it started (``t_ms`` 0)."""
    # A stopped clock: the refusal is the answer's first and only moment, so t_ms is exactly 0 (a running
    # clock stamped 0.1 ms whenever the builder's two readings fell a tenth of a millisecond apart).
    return EventBuilder(clock=lambda: 0.0).error(code=code, message=message)


class _StoppingStreamingResponse(StreamingResponse):
    """An SSE response that stops its body when the caller disconnects, and always closes it.

    Starlette's own response cancels the sending through an anyio cancel scope and then drops the body:
    a generator left suspended is never closed (the answer's tasks and TTS session live on until garbage
    collection, if ever), and one caught mid-``await`` is cancelled again at every ``await`` of its
    cleanup. Here the sending runs in a task that a disconnect cancels once (plain asyncio, so ``finally``
    blocks can await their cleanup), and the body is closed afterwards whatever happened.

    Args:
        on_disconnect: Called once, first, when the caller has gone mid-answer (the app's barge-in).
    """

    def __init__(self, *args: Any, on_disconnect: Callable[[], object] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_disconnect = on_disconnect

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        streaming = asyncio.create_task(self.stream_response(send), name="sse-stream")
        watching = asyncio.create_task(self.listen_for_disconnect(receive), name="sse-disconnect")
        try:
            await asyncio.wait({streaming, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Shielded: an outer cancellation (server shutdown) must not cut the cleanup short.
            with anyio.CancelScope(shield=True):
                await self._stop(streaming, watching)
        error = streaming.exception() if streaming.done() and not streaming.cancelled() else None
        if isinstance(error, OSError):  # the caller went away mid-send
            logger.debug("error=<%s> | the caller went away mid-send", type(error).__name__)
        elif isinstance(error, BaseException):
            raise error
        if self.background is not None:
            await self.background()

    async def _stop(self, streaming: asyncio.Task[None], watching: asyncio.Task[None]) -> None:
        sent_all = streaming.done() and not streaming.cancelled() and streaming.exception() is None
        if not sent_all:
            logger.debug("the caller disconnected; stopping the answer")
            if self.on_disconnect is not None:
                # Before anything is cancelled, so the TTS endpoint gets the barge-in's Leg 1 cancel.
                self.on_disconnect()
        await cancel_and_wait([streaming, watching], _STOP_TIMEOUT_S)
        body = self.body_iterator
        if streaming.done() and isinstance(body, AsyncGenerator):
            # The body may sit at a yield (the send was what got cancelled): close it, and with it the
            # chain below it (see VoiceAgentCoreApp._stream_with_error_handling).
            with anyio.move_on_after(_STOP_TIMEOUT_S):
                await body.aclose()


class VoiceAgentCoreApp(BedrockAgentCoreApp):
    """``BedrockAgentCoreApp`` that answers a body that is not JSON with a clean Leg 3 error and stops
    an answer whose caller has gone.

    The base class echoes the JSON parser's exception text to the caller; this one does not. Its
    streaming response is replaced by one that, when the caller disconnects, first calls the answer's
    barge-in (registered with :meth:`on_disconnect`), then closes the whole generator chain (the base
    class's SSE wrapper, the entrypoint's generator, the handler's stream).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # What to call when an answer's caller disconnects, by the generator that streams the answer.
        self._on_disconnect: weakref.WeakKeyDictionary[Any, Callable[[], object]] = (
            weakref.WeakKeyDictionary()
        )

    def on_disconnect(self, answer: AsyncGenerator[Any, None], callback: Callable[[], object]) -> None:
        """Call ``callback`` (e.g. ``handler.interrupt``) if the caller of ``answer`` disconnects mid-answer.

        Args:
            answer: The async generator the entrypoint returns.
            callback: Called once, on the server's loop, before the answer is stopped.
        """
        self._on_disconnect[answer] = callback

    async def _handle_invocation(self, request: Request) -> Response:
        try:
            await request.json()  # Starlette caches the parsed body for the base class
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            # RecursionError: deeply nested JSON; still the caller's bad input, not a server fault.
            return JSONResponse(error_event("invalid_json", "the request body must be a JSON object"), 400)
        response: Response = await super()._handle_invocation(request)  # type: ignore[no-untyped-call]
        if type(response) is StreamingResponse:
            stopping = _StoppingStreamingResponse(
                response.body_iterator,
                status_code=response.status_code,
                background=response.background,
                on_disconnect=self._on_disconnect.pop(response.body_iterator, None),
            )
            stopping.raw_headers = response.raw_headers
            return stopping
        return response

    def _convert_to_sse(self, obj: Any) -> bytes:
        # The base class's .encode("utf-8") raises a raw UnicodeEncodeError mid-stream on text holding a
        # lone surrogate (a broken model stream): the caller would lose the rest of the answer. Refused
        # text becomes one clear error event instead, and the stream goes on.
        if not isinstance(obj, dict):
            return bytes(super()._convert_to_sse(obj))
        try:
            return encode_sse(obj)
        except TextEncodingError as error:
            logger.warning("field=<%s> | event not sent: text UTF-8 cannot carry", error.field)
            message = f"A {obj.get('type', 'stream')} event was dropped: its text is not valid Unicode."
            return encode_sse(error_event("agent_error", message))

    def _stream_with_error_handling(
        self, generator: AsyncGenerator[Any, None]
    ) -> AsyncGenerator[bytes, None]:
        framed = self._closing_stream(generator)
        callback = self._on_disconnect.pop(generator, None)
        if callback is not None:
            self._on_disconnect[framed] = callback  # the streaming response gets the framed generator
        return framed

    async def _closing_stream(self, generator: AsyncGenerator[Any, None]) -> AsyncGenerator[bytes, None]:
        # The base class iterates the entrypoint's generator but never closes it: closing this wrapper
        # closes the base's wrapper, then the entrypoint's generator (and with it the handler's stream).
        async with contextlib.aclosing(generator):
            framed = super()._stream_with_error_handling(generator)  # type: ignore[no-untyped-call]
            async with contextlib.aclosing(framed):
                async for chunk in framed:
                    yield chunk


def create_app(
    *,
    tts_url: str | None = None,
    model: str | Model | None = None,
    system_prompt: str | None = None,
    static_dir: str | Path | None = None,
    max_prompt_chars: int = MAX_PROMPT_CHARS,
    silence_timeout: float | None = None,
    metrics: AnswerMetrics | None = None,
    conversation_store: ConversationStore | None = None,
    transport_factory: TransportFactory | None = None,
) -> VoiceAgentCoreApp:
    """Build the app.

    Args:
        tts_url: The TTS endpoint URL; ``TTS_ENDPOINT_URL`` when None.
        model: A model spec (see :mod:`agentcore_app.models`) or a Strands model; from the environment when
            None (``VOICE_MODEL``, ``BEDROCK_MODEL_ID``, else Bedrock with credentials, scripted without).
        system_prompt: The agent's system prompt; ``SYSTEM_PROMPT`` or a voice-friendly default when None.
        static_dir: Where the browser page lives; the package's ``static/`` folder when None.
        max_prompt_chars: The longest prompt accepted.
        silence_timeout: Seconds the TTS endpoint may stay silent while audio is owed before speech is
            given up (an ``error`` event); ``TTS_SILENCE_TIMEOUT_S`` or 20 s when None. A CPU endpoint on
            a busy machine needs more.
        metrics: Where each answer's figures go (:mod:`agentcore_app.metrics`); None: as
            ``AGENT_METRICS`` says (off unless ``emf``).
        conversation_store: Where session conversations are kept; ``CONVERSATION_*`` when None.
        transport_factory: Creates the TTS transports instead of ``tts_url`` (tests).

    Returns:
        The app, ready for uvicorn (``/invocations``, ``/ping``, ``/``, ``/static``).

    Raises:
        ConfigurationError: No TTS URL given and ``TTS_ENDPOINT_URL`` unset, or the URL is malformed.
        ModelSpecError: The model spec is malformed.
        MissingDependencyError: The chosen model provider's extra is not installed.
    """
    resolved_url = tts_url_from_env() if tts_url is None else normalize_tts_url(tts_url)
    resolved_prompt = system_prompt_from_env() if system_prompt is None else system_prompt
    if model is None:
        model = model_spec_from_env()
    resolved_silence_timeout = silence_timeout_from_env() if silence_timeout is None else silence_timeout
    answer_metrics = metrics if metrics is not None else metrics_from_env()
    # One model for every request: a Strands model holds no conversation; the agent does.
    shared_model = create_model(model) if isinstance(model, str) else model
    store = ConversationStore.from_env() if conversation_store is None else conversation_store

    def make_agent(**conversation: Any) -> Agent:
        # The voice handler joins each run (handler.stream composes it); the agent outlives it.
        return Agent(model=shared_model, system_prompt=resolved_prompt, callback_handler=None, **conversation)

    conversations = Conversations(store, make_agent)
    app = VoiceAgentCoreApp()
    app.state.conversations = conversations

    async def stream_answer(
        request: VoiceRequest, request_id: str | None, session_id: str | None, voice: VoiceCallbackHandler
    ) -> AsyncGenerator[Event, None]:
        # The session's agent (a fresh one without a session id), speaking through a fresh voice handler:
        # the handler is the whole voice pipeline.
        clock = EventBuilder()  # only for an error raised past the handler's stream; its t_ms is close enough
        try:
            # The session's previous answer, if still speaking, is interrupted and has ended by now.
            async with conversations.turn(session_id, voice, request_id) as agent:
                # text_delta from the agent's token stream and the handler's speech events, from one queue.
                events = voice.stream(agent, request.prompt, options=request.options, request_id=request_id)
                # Closing this generator (the caller left) closes the stream: its tasks and TTS session end.
                async with contextlib.aclosing(events):
                    async for event in events:
                        yield event
        except SessionBusyError:
            message = "this session's previous answer is still stopping; try again"
            yield clock.error(code="busy", message=message)
        except Exception:
            logger.exception("request_id=<%s> | voice answer failed", request_id)
            yield clock.error(code="internal", message="the agent could not finish its answer; try again")
        finally:
            voice.close()

    # A plain function on purpose: bedrock-agentcore then streams the returned async generator on the
    # server's own loop, where a caller's disconnect cancels it at once. An async entrypoint's generator
    # is bridged through a worker loop and a thread blocked on the next event, which cannot be stopped
    # until that event comes (an agent still thinking keeps its TTS session open meanwhile).
    @app.entrypoint
    def invoke(payload: Any, context: RequestContext) -> Response | AsyncIterator[Event]:
        session_id = context.session_id
        try:
            if session_id is not None:
                validate_session_id(session_id)
            if isinstance(payload, dict) and payload.get("action") == "interrupt":
                return interrupt_session(session_id, payload.get("request_id"))
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
        voice = VoiceCallbackHandler(
            resolved_url, silence_timeout=resolved_silence_timeout, transport_factory=transport_factory
        )
        answer = stream_answer(request, request_id, session_id, voice)
        if answer_metrics is not None:
            answer = measured(answer, answer_metrics)
        # The caller hangs up mid-answer: barge in (Leg 1 cancel, undelivered audio dropped), then stop.
        app.on_disconnect(answer, voice.interrupt)
        return answer

    def interrupt_session(session_id: str | None, request_id: Any) -> Response:
        """``{"action": "interrupt", "request_id"?}``: barge in on the session's answer (the Stop button)."""
        if session_id is None:
            message = "interrupt needs the X-Amzn-Bedrock-AgentCore-Runtime-Session-Id header"
            return JSONResponse(error_event("invalid_request", message), status_code=400)
        if request_id is not None and not isinstance(request_id, str):
            return JSONResponse(error_event("invalid_request", "'request_id' must be a string"), 400)
        interrupted = conversations.interrupt(session_id, request_id)
        logger.debug("session_id=<%s>, interrupted=<%s> | interrupt action", session_id, interrupted)
        return JSONResponse({"type": "interrupt_result", "interrupted": interrupted})

    pages = Path(static_dir) if static_dir is not None else STATIC_DIR

    async def index(_request: Request) -> Response:
        page = pages / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html; charset=utf-8")
        return PlainTextResponse("This app has no browser page installed.", status_code=404)

    app.router.routes.append(Route("/", index, methods=["GET"]))
    if pages.is_dir():
        app.router.routes.append(Mount("/static", app=StaticFiles(directory=pages), name="static"))
    return app
