"""The OpenAI-compatible speech API: ``POST /v1/audio/speech``, ``GET /v1/audio/voices``, ``GET /v1/models``.

Every OpenAI client (the ``openai`` SDKs, Open WebUI, Pipecat, LiveKit) can speak through the endpoint
with ``base_url="http://host:port/v1"``. The route runs the same pipeline as ``POST /invocations``: the
same validation and limits (:func:`~kokoro_endpoint.serving.synthesis_job.validate_synthesize`), the same
segment stream and capacity slot, the library's encoders; only the request and error shapes are OpenAI's.

* ``response_format``: ``mp3`` | ``opus`` (Ogg) | ``aac`` (ADTS) | ``flac`` | ``wav`` | ``pcm`` (raw s16le,
  24 kHz, mono, as OpenAI's ``pcm``); as extensions for phone lines ``mulaw`` | ``alaw`` (G.711, 8 kHz, no
  header). Default ``mp3``, as OpenAI's.
* ``stream_format``: ``audio`` (the encoded bytes, streamed from the first segment) or ``sse``
  (``data: {"type": "speech.audio.delta", "audio": <base64>}`` events, then one
  ``{"type": "speech.audio.done", "usage": {...}}``; Kokoro counts no tokens, so usage is zeros).
* ``voice``: one of the engine's voices or a blend (``a+b``, ``a(2)+b(1)``), a ``{"id": ...}`` object
  naming one, or one of OpenAI's built-in names (``alloy``, ``nova``, ...), which the endpoint has no
  voice for and speaks with its default voice.
* Extensions: ``lang`` (a Kokoro language letter) and ``lexicon`` (``{"word": "phonemes"}``), as on Leg 1.
* ``model``: one of :data:`MODELS` (``kokoro``, or OpenAI's TTS model names, all served by Kokoro-82M).
* Errors: ``{"error": {"message", "type", "param", "code"}}`` with OpenAI's status codes: 400
  ``invalid_request_error``, 404 for an unknown model, 413 for a body over the limit, 503 while the model
  loads or at capacity.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from strands_voice_protocol.audio import create_encoder
from strands_voice_protocol.errors import FrameDecodeError, MissingDependencyError
from strands_voice_protocol.frames import ErrorFrame, Synthesize, decode_lexicon, parse_object
from strands_voice_protocol.sse import encode_sse

from kokoro_endpoint.engines.interface import Engine, ReadingEngine

# The /invocations route's body reader, capacity-slot response and encoded stream: one implementation.
from kokoro_endpoint.serving.invocations import (
    CLOSE_CONNECTION,
    DrainedResponse,
    RequestSynthesis,
    SlotResponse,
    binary_body,
    read_body,
)
from kokoro_endpoint.serving.state import EndpointState
from kokoro_endpoint.serving.synthesis_job import validate_synthesize

__all__ = ["MODELS", "OPENAI_VOICES", "RESPONSE_FORMATS", "openai_error", "openai_routes", "voice_list"]

logger = logging.getLogger(__name__)

#: Model ids accepted (and listed by ``GET /v1/models``); all are Kokoro-82M.
MODELS: Final = ("kokoro", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
#: OpenAI ``response_format`` → the library's encoder format.
RESPONSE_FORMATS: Final[dict[str, str]] = {
    "mp3": "mp3",
    "opus": "opus",
    "aac": "aac",
    "flac": "flac",
    "wav": "wav",
    "pcm": "pcm16",
    "mulaw": "mulaw",
    "alaw": "alaw",
}
STREAM_FORMATS: Final = ("audio", "sse")
#: OpenAI's built-in voice names: spoken with the engine's default voice (the endpoint has none of them).
OPENAI_VOICES: Final = frozenset(
    {"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse"}
    | {"marin", "cedar"}
)
_CREATED: Final = 1_735_689_600  # 2025-01-01, a fixed "created" for the model list
_STATUS_TYPES: Final[dict[int, str]] = {
    400: "invalid_request_error",
    404: "invalid_request_error",
    413: "invalid_request_error",
    503: "server_error",
}
#: Leg 1 error code → (HTTP status, the OpenAI ``param`` it concerns).
_FRAME_ERRORS: Final[dict[str, tuple[int, str | None]]] = {
    "text_too_long": (400, "input"),
    "unknown_voice": (400, "voice"),
    "unsupported_language": (400, "lang"),
    "invalid_request": (400, None),
    "invalid_json": (400, None),
    "busy": (503, None),
}


def openai_error(
    status: int,
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """An OpenAI error object: ``{"error": {"message", "type", "param", "code"}}``."""
    body = {
        "error": {
            "message": message,
            "type": _STATUS_TYPES.get(status, "server_error"),
            "param": param,
            "code": code,
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


class _BadRequest(Exception):
    def __init__(self, message: str, param: str | None = None, status: int = 400, code: str | None = None):
        super().__init__(message)
        self.message, self.param, self.status, self.code = message, param, status, code

    def response(self) -> Response:
        return openai_error(self.status, self.message, param=self.param, code=self.code)


def _field(body: dict[str, Any], name: str, default: str) -> str:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise _BadRequest(f"'{name}' must be a string.", name)
    return value


def _voice(body: dict[str, Any], engine: Engine) -> str | None:
    value = body.get("voice")
    if isinstance(value, dict):
        value = value.get("id")
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BadRequest("'voice' must be a voice name or {\"id\": name}.", "voice")
    if value not in engine.voices and value.lower() in OPENAI_VOICES:
        return engine.default_voice
    return value


def _speed(body: dict[str, Any]) -> float | None:
    value = body.get("speed")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _BadRequest("'speed' must be a number.", "speed")
    return float(value)


def _parse(body: bytes, engine: Engine) -> tuple[Synthesize, str, str]:
    """The request as a Leg 1 synthesize message, the encoder format and the stream format."""
    try:
        obj = parse_object(body)  # bad UTF-8, not JSON, nested past the parser's depth: all one answer
    except FrameDecodeError:
        raise _BadRequest("The body must be a JSON object.") from None
    model = _field(obj, "model", "")
    if model not in MODELS:
        raise _BadRequest(
            f"The model '{model}' does not exist; use one of {', '.join(MODELS)}.",
            "model",
            status=404,
            code="model_not_found",
        )
    text = obj.get("input")
    if not isinstance(text, str) or not text.strip():
        raise _BadRequest("'input' is required and must be a non-empty string.", "input")
    response_format = _field(obj, "response_format", "mp3")
    if response_format not in RESPONSE_FORMATS:
        raise _BadRequest(
            f"'response_format' must be one of {', '.join(RESPONSE_FORMATS)}.", "response_format"
        )
    stream_format = _field(obj, "stream_format", "audio")
    if stream_format not in STREAM_FORMATS:
        raise _BadRequest("'stream_format' must be 'audio' or 'sse'.", "stream_format")
    lang = obj.get("lang")
    if lang is not None and not isinstance(lang, str):
        raise _BadRequest("'lang' must be a language letter such as 'a' or 'j'.", "lang")
    try:
        lexicon = decode_lexicon(obj.get("lexicon"))
    except FrameDecodeError as error:
        raise _BadRequest(error.message, "lexicon") from None
    message = Synthesize(text=text, voice=_voice(obj, engine), speed=_speed(obj), lang=lang, lexicon=lexicon)
    return message, RESPONSE_FORMATS[response_format], stream_format


async def speech(request: Request) -> Response:
    """``POST /v1/audio/speech``: OpenAI's speech request, streamed as it is synthesized."""
    state: EndpointState = request.app.state.endpoint
    settings = state.settings
    engine, scheduler = state.engine, state.scheduler
    if not state.ready or engine is None or scheduler is None:
        return openai_error(503, "The model is still loading; try again shortly.", code="model_loading")
    body = await read_body(request, settings.max_frame_bytes)
    if body is None:
        too_large = f"The request is larger than {settings.max_frame_bytes} bytes."
        return DrainedResponse(openai_error(413, too_large, headers=CLOSE_CONNECTION))
    try:
        message, audio_format, stream_format = _parse(body, engine)
    except _BadRequest as error:
        return error.response()
    job = validate_synthesize(message, engine, settings)
    if isinstance(job, ErrorFrame):
        status, param = _FRAME_ERRORS.get(job.code, (400, None))
        return openai_error(status, job.message, param=param, code=job.code)
    try:
        encoder = create_encoder(audio_format, engine.sample_rate)
    except MissingDependencyError:
        logger.exception("format=<%s> | encoder unavailable", audio_format)
        return openai_error(400, "That response_format is not available here.", param="response_format")
    refusal = scheduler.refusal()
    if refusal is not None:
        return openai_error(503, f"The endpoint cannot keep one more listener fed ({refusal}).", code="busy")
    logger.debug(
        "request_id=<%s>, format=<%s>, stream=<%s> | speech", job.request_id, audio_format, stream_format
    )
    headers = {"X-Request-Id": job.request_id, "Cache-Control": "no-store"}
    audio = binary_body(RequestSynthesis(job, engine, scheduler, settings, encoder))
    content = _sse_body(audio) if stream_format == "sse" else audio
    media_type = "text/event-stream" if stream_format == "sse" else encoder.mime_type
    return SlotResponse(
        content,
        capacity=state.capacity,
        busy=openai_error(503, "The endpoint is at capacity; try again shortly.", code="busy"),
        send_timeout_s=settings.send_timeout_s,
        media_type=media_type,
        headers=headers,
    )


async def _sse_body(audio: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """OpenAI's speech SSE events around the encoded chunks of ``audio`` (closed with this stream, so a
    client that goes away stops the synthesis at once)."""
    try:
        async for chunk in audio:
            yield encode_sse({"type": "speech.audio.delta", "audio": base64.b64encode(chunk).decode("ascii")})
    except Exception:
        error = {"message": "Speech synthesis failed for this request.", "type": "server_error"}
        yield encode_sse({"type": "error", "error": {**error, "param": None, "code": "internal"}})
        return
    finally:
        if isinstance(audio, AsyncGenerator):
            await audio.aclose()
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    yield encode_sse({"type": "speech.audio.done", "usage": usage})


def voice_list(engine: Engine) -> dict[str, Any]:
    """The engine's base voices and the languages it reads: ``{"voices": [...], "default": name,
    "languages": [...]}`` (sorted). Blends of the voices (``a+b``, ``a(2)+b(1)``) are accepted too."""
    languages = engine.languages if isinstance(engine, ReadingEngine) else frozenset({"a"})
    return {"voices": sorted(engine.voices), "default": engine.default_voice, "languages": sorted(languages)}


async def voices(request: Request) -> Response:
    """``GET /v1/audio/voices``: the voices ``voice`` accepts (OpenAI's own names map to ``default``)."""
    state: EndpointState = request.app.state.endpoint
    if not state.ready or state.engine is None:
        return openai_error(503, "The model is still loading; try again shortly.", code="model_loading")
    return JSONResponse(voice_list(state.engine))


async def models(request: Request) -> Response:
    """``GET /v1/models``: OpenAI's model list; every id is served by Kokoro-82M."""
    data = [
        {"id": model, "object": "model", "created": _CREATED, "owned_by": "strands-voice"} for model in MODELS
    ]
    return JSONResponse({"object": "list", "data": data})


def openai_routes() -> list[BaseRoute]:
    """The OpenAI-compatible routes, for the app's route table."""
    return [
        Route("/v1/audio/speech", speech, methods=["POST"]),
        Route("/v1/audio/voices", voices, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
    ]
