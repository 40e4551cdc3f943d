"""The Leg 1 ASGI app: ``GET /ping``, ``POST /invocations``, ``WS /invocations-bidirectional-stream``,
``GET /voices``, and the OpenAI-compatible speech API under ``/v1``
(:mod:`kokoro_endpoint.serving.openai_api`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.frames import ErrorFrame, encode_server_message
from strands_voice_protocol.wire import BIDI_PATH

from kokoro_endpoint.engines.interface import Engine
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.invocations import invocations
from kokoro_endpoint.serving.metrics import (
    DEFAULT_INTERVAL_S,
    EndpointMetrics,
    MetricsMiddleware,
    metrics_from_env,
    report_every,
)
from kokoro_endpoint.serving.openai_api import openai_routes, voice_list
from kokoro_endpoint.serving.state import EndpointState
from kokoro_endpoint.serving.ws_session import EndpointSession
from kokoro_endpoint.settings import Settings

__all__ = ["BIDI_PATH", "Settings", "create_app", "engine_info"]

logger = logging.getLogger(__name__)

#: WebSocket close code "try again later" (capacity reached, model loading).
_TRY_AGAIN_LATER = 1013


#: What each engine runs, for ``/ping``.
ENGINE_MODELS = {"onnx": "Kokoro-82M int8 ONNX", "torch": "hexgrad/Kokoro-82M"}


def engine_info(engine: Engine) -> dict[str, str]:
    """``engine``, ``device`` and ``model`` of a loaded engine (``/ping`` reports them)."""
    # The torch engine records where it runs; the ONNX engine always runs on onnxruntime's CPU provider.
    device = str(getattr(engine, "device", "cpu"))
    return {"engine": engine.name, "device": device, "model": ENGINE_MODELS.get(engine.name, engine.name)}


async def ping(request: Request) -> Response:
    """200 ``{"status": "ok", "engine", "device", "model"}`` once loaded and warmed, 503 before."""
    state: EndpointState = request.app.state.endpoint
    if state.ready and state.engine is not None:
        return JSONResponse({"status": "ok", **engine_info(state.engine)})
    return JSONResponse({"status": "loading"}, status_code=503)


async def voices(request: Request) -> Response:
    """``GET /voices``: ``{"voices": [...], "default": name, "languages": [...]}``: what a request's
    ``voice`` may name (or blend) and the ``lang`` letters it may ask for."""
    state: EndpointState = request.app.state.endpoint
    if not state.ready or state.engine is None:
        return JSONResponse({"status": "loading"}, status_code=503)
    return JSONResponse(voice_list(state.engine))


async def _refuse(websocket: WebSocket, message: str) -> None:
    with contextlib.suppress(Exception):  # the client may already be gone
        await websocket.send_text(encode_server_message(ErrorFrame("busy", message)))
        await websocket.close(code=_TRY_AGAIN_LATER)


async def bidirectional_stream(websocket: WebSocket) -> None:
    """One Leg 1 session per WebSocket connection."""
    state: EndpointState = websocket.app.state.endpoint
    await websocket.accept()
    if not state.ready or state.engine is None or state.scheduler is None:
        await _refuse(websocket, "The model is still loading; try again shortly.")
        return
    refusal = state.scheduler.refusal()
    if refusal is not None:
        logger.info("reason=<%s> | session refused: the engine cannot feed one more", refusal)
        await _refuse(websocket, f"The endpoint cannot keep one more listener fed ({refusal}); try again.")
        return
    if not state.capacity.try_acquire():
        logger.info("sessions=<%d> | session refused: at capacity", state.capacity.in_use)
        await _refuse(websocket, "The endpoint is at capacity; try again shortly.")
        return
    try:
        await EndpointSession(websocket, state.engine, state.scheduler, state.settings).run()
    finally:
        state.capacity.release()


def _lifespan(
    state: EndpointState,
    metrics: EndpointMetrics | None,
    interval_s: float,
    on_load_failure: Callable[[BaseException], None] | None,
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan: the scheduler, the engine (loaded in the background when not given), the
    interval metrics; at shutdown every task cancelled and the running step waited for. A background
    load that fails calls ``on_load_failure`` with the error (the CLI stops the server)."""

    def loaded(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None and on_load_failure is not None:
            on_load_failure(task.exception() or RuntimeError("the engine could not be loaded"))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.scheduler = SynthesisScheduler(
            state.settings.synthesis_workers,
            state.settings.scheduling,
            opening_lane=state.settings.opening_lane,
            admission=state.settings.admission_max_load,
        )
        loader: asyncio.Task[None] | None = None
        if state.engine is not None:
            await state.load()
        else:
            loader = asyncio.create_task(state.load(), name="engine-load")
            loader.add_done_callback(loaded)
        reporting = [] if metrics is None else [asyncio.create_task(report_every(metrics, state, interval_s))]
        try:
            yield
        finally:
            if loader is not None:
                await cancel_and_wait([loader], grace_s=1.0)
            await cancel_and_wait(reporting, grace_s=1.0)
            await asyncio.to_thread(state.scheduler.shutdown)  # waits for a running step

    return lifespan


def create_app(
    engine: Engine | None = None,
    settings: Settings | None = None,
    metrics: EndpointMetrics | None = None,
    metrics_interval_s: float = DEFAULT_INTERVAL_S,
    on_load_failure: Callable[[BaseException], None] | None = None,
) -> Starlette:
    """Build the endpoint app.

    Args:
        engine: A loaded engine; it is warmed at startup before the server accepts connections. When
            None, ``settings.engine`` is loaded in the background after startup and ``/ping`` answers 503
            until it is ready (what SageMaker expects while a model loads).
        settings: Limits; defaults to :class:`Settings`.
        metrics: Where the CloudWatch metrics go (:mod:`kokoro_endpoint.serving.metrics`); None: as
            ``KOKORO_METRICS`` says (off unless ``emf``).
        metrics_interval_s: Seconds between the interval metrics (sessions, queued steps, errors).
        on_load_failure: Called with the error when the background load fails (``/ping`` would say
            ``loading`` for ever): the CLI stops the server and exits non-zero.

    Returns:
        The Starlette app.
    """
    state = EndpointState(settings=settings or Settings(), engine=engine)
    metrics = metrics if metrics is not None else metrics_from_env()

    app = Starlette(
        routes=[
            Route("/ping", ping, methods=["GET"]),
            Route("/invocations", invocations, methods=["POST"]),
            WebSocketRoute(BIDI_PATH, bidirectional_stream),
            Route("/voices", voices, methods=["GET"]),
            *openai_routes(),
        ],
        lifespan=_lifespan(state, metrics, metrics_interval_s, on_load_failure),
        middleware=[]
        if metrics is None
        else [Middleware(MetricsMiddleware, metrics=metrics, max_frame_bytes=state.settings.max_frame_bytes)],
    )
    app.state.endpoint = state
    return app
