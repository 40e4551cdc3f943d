"""``POST /invocations``: one request, its audio streamed as it is synthesized (binary or SSE)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Message, Receive, Scope, Send
from strands_voice_protocol.aio.drain import respond_then_drain
from strands_voice_protocol.audio import AUDIO_FORMATS, AudioEncoder, create_encoder, format_sample_rate
from strands_voice_protocol.errors import FrameDecodeError, MissingDependencyError
from strands_voice_protocol.frames import (
    ErrorFrame,
    Synthesize,
    decode_client_message,
    encode_server_message,
)
from strands_voice_protocol.sse import encode_sse
from strands_voice_protocol.synthesis_events import SynthesisEventBuilder

from kokoro_endpoint.engines.interface import Engine
from kokoro_endpoint.engines.pipeline import RequestAudio, audio_seconds, synthesize_segments
from kokoro_endpoint.scheduling.capacity import Capacity
from kokoro_endpoint.scheduling.interrupt import Interrupt
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.audio_out import SampleSkip, pcm16_frames, to_pcm16
from kokoro_endpoint.serving.state import EndpointState
from kokoro_endpoint.serving.synthesis_job import SynthesisJob, validate_synthesize
from kokoro_endpoint.settings import Settings

__all__ = [
    "CLOSE_CONNECTION",
    "TRANSPORTS",
    "DrainedResponse",
    "RequestSynthesis",
    "SlotResponse",
    "binary_body",
    "invocations",
    "read_body",
]

logger = logging.getLogger(__name__)

TRANSPORTS = ("binary", "sse")


#: Sent with a body refused for its size: uvicorn then closes the connection instead of reading (and
#: discarding) the rest of a body that may be gigabytes long.
CLOSE_CONNECTION: Final = {"Connection": "close"}


def _error(
    status: int,
    code: str,
    message: str,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    body = encode_server_message(ErrorFrame(code, message, request_id))
    return Response(body, status_code=status, media_type="application/json", headers=headers)


class DrainedResponse(Response):
    """A refusal of an oversized body (413): the answer goes out, then the rest of the body is read and
    discarded within a bound (:func:`~strands_voice_protocol.aio.drain.respond_then_drain`), so a client
    that sends it all before reading (``urllib``, ``requests``, ``curl``) reads the answer, not a reset."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.body, response.status_code)
        self.raw_headers = response.raw_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def respond(inner_send: Send) -> None:
            await super(DrainedResponse, self).__call__(scope, receive, inner_send)

        await respond_then_drain(respond, scope, receive, send)


class _SendTimeout(Exception):
    """The client took longer than the send timeout to take one more piece of the body."""


class SlotResponse(StreamingResponse):
    """A streaming response that holds a capacity slot while it streams, and only then.

    The slot is taken when the response starts, not before: nothing can fail between taking it and the
    ``finally`` that gives it back. At capacity the ``busy`` response goes out instead. A client that
    takes no byte for ``send_timeout_s`` (it stopped reading, a proxy buffers nothing more) is dropped, so
    it cannot hold its slot for ever.

    Args:
        content: The body.
        capacity: Where the slot comes from.
        busy: The answer when no slot is free.
        send_timeout_s: The longest one piece of the body may wait for the client.
        **kwargs: Passed to ``StreamingResponse`` (``media_type``, ``headers``).
    """

    def __init__(
        self,
        content: AsyncIterator[bytes],
        *,
        capacity: Capacity,
        busy: Response,
        send_timeout_s: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(content, **kwargs)
        self._capacity = capacity
        self._busy = busy
        self._send_timeout_s = send_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._capacity.try_acquire():
            if isinstance(self.body_iterator, AsyncGenerator):
                await self.body_iterator.aclose()
            await self._busy(scope, receive, send)
            return

        async def send_in_time(message: Message) -> None:
            try:
                await asyncio.wait_for(send(message), self._send_timeout_s)
            except TimeoutError:
                raise _SendTimeout from None

        try:
            await super().__call__(scope, receive, send_in_time)
        except _SendTimeout:
            logger.info(
                "send_timeout_s=<%s> | the client stopped reading; response dropped", self._send_timeout_s
            )
        finally:
            self._capacity.release()


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None when it is larger than ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def invocations(request: Request) -> Response:
    """Synthesize ``{"text", "voice"?, "speed"?, "format"?, "transport"?, "request_id"?, "normalize"?,
    "timestamps"?, "skip_samples"?}`` (``timestamps`` adds ``word_timestamps`` events to the SSE
    transport; ``skip_samples`` drops that many samples from the start, before encoding)."""
    state: EndpointState = request.app.state.endpoint
    settings = state.settings
    engine = state.engine
    scheduler = state.scheduler
    if not state.ready or engine is None or scheduler is None:
        return _error(503, "busy", "The model is still loading; try again shortly.")
    body = await read_body(request, settings.max_frame_bytes)
    if body is None:
        too_large = f"The request is larger than {settings.max_frame_bytes} bytes."
        return DrainedResponse(_error(413, "invalid_request", too_large, headers=CLOSE_CONNECTION))
    try:
        message = decode_client_message(body)
    except FrameDecodeError as error:
        return _error(400, error.code, error.message)
    if not isinstance(message, Synthesize):
        return _error(400, "invalid_request", "This route takes a synthesize request with 'text'.")
    options = json.loads(body)  # a JSON object: decode_client_message checked it
    audio_format = options.get("format", "pcm16")
    transport = options.get("transport", "binary")
    if not isinstance(transport, str) or transport not in TRANSPORTS:
        return _error(400, "invalid_request", "'transport' must be 'binary' or 'sse'.", message.request_id)
    job = validate_synthesize(message, engine, settings)
    if isinstance(job, ErrorFrame):
        return _error(400, job.code, job.message, job.request_id)
    if not isinstance(audio_format, str) or audio_format not in AUDIO_FORMATS:
        return _error(
            400, "invalid_request", f"'format' must be one of {', '.join(AUDIO_FORMATS)}.", job.request_id
        )
    try:
        encoder = create_encoder(audio_format, engine.sample_rate)
    except MissingDependencyError:
        logger.exception("format=<%s> | encoder unavailable", audio_format)
        return _error(400, "invalid_request", "That audio format is not available here.", job.request_id)
    refusal = scheduler.refusal()
    if refusal is not None:
        message_ = f"The endpoint cannot keep one more listener fed ({refusal})."
        return _error(503, "busy", message_, job.request_id)
    headers = {"X-Request-Id": job.request_id, "Cache-Control": "no-store"}
    synthesis = RequestSynthesis(job, engine, scheduler, settings, encoder)
    body_iterator: AsyncIterator[bytes]
    if transport == "sse":
        body_iterator = _sse_body(synthesis)
        media_type = "text/event-stream"
    else:
        body_iterator = binary_body(synthesis)
        media_type = str(encoder.mime_type)
    return SlotResponse(
        body_iterator,
        capacity=state.capacity,
        busy=_error(503, "busy", "The endpoint is at capacity; try again shortly.", job.request_id),
        send_timeout_s=settings.send_timeout_s,
        media_type=media_type,
        headers=headers,
    )


@dataclass(frozen=True, slots=True)
class RequestSynthesis:
    """One validated request and what synthesizes and encodes it: the bodies stream from it."""

    job: SynthesisJob
    engine: Engine
    scheduler: SynthesisScheduler
    settings: Settings
    encoder: AudioEncoder

    async def segments(self) -> AsyncIterator[RequestAudio]:
        """The request's segments (audio and, when asked, words) as each is ready."""
        job, settings = self.job, self.settings
        # Set when the body stops being read mid-step (the client went away): the engine stops at once.
        interrupt = Interrupt()
        stream = self.scheduler.stream(
            synthesize_segments(
                self.engine,
                job.text,
                job.voice,
                job.speed,
                settings.clause_chars,
                settings.silence,
                normalize=job.normalize,
                timestamps=job.timestamps,
                reading=job.reading,
                interrupt=interrupt,
            ),
            seconds=audio_seconds(self.engine.sample_rate),
            interrupt=interrupt,
        )
        try:
            while (segment := await stream.next()) is not None:
                yield segment
        finally:
            stream.close()


async def binary_body(synthesis: RequestSynthesis) -> AsyncIterator[bytes]:
    """The request's audio from ``skip_samples`` on, encoded, as each segment is ready."""
    encoder, frame_bytes = synthesis.encoder, synthesis.settings.audio_frame_bytes
    skip = SampleSkip(synthesis.job.skip_samples or 0, synthesis.engine.sample_rate)
    try:
        async for segment in synthesis.segments():
            for pcm in pcm16_frames(skip.take(to_pcm16(segment.audio)), frame_bytes):
                chunk = encoder.encode(pcm)
                if chunk:
                    yield chunk
        tail = encoder.flush()
        if tail:
            yield tail
    except Exception:
        # The status line is gone; ending the body early (uvicorn aborts it) is the only signal left.
        logger.exception("request_id=<%s> | synthesis failed", synthesis.job.request_id)
        raise


async def _sse_body(synthesis: RequestSynthesis) -> AsyncIterator[bytes]:
    """The request's Leg 3 synthesis events: ``audio_start``, the chunks (and words), then the end."""
    job, engine, settings, encoder = synthesis.job, synthesis.engine, synthesis.settings, synthesis.encoder
    events = SynthesisEventBuilder(job.request_id)
    seq = 0
    sent = 0
    pcm_bytes = 0
    skip = SampleSkip(job.skip_samples or 0, engine.sample_rate)
    yield encode_sse(
        events.audio_start(format=encoder.format, sample_rate=format_sample_rate(encoder.format))
    )
    try:
        async for segment in synthesis.segments():
            kept, words = skip.take_segment(to_pcm16(segment.audio), segment.words)
            if not kept:
                continue  # the client has all of this segment (skip_samples)
            if words:
                yield encode_sse(events.word_timestamps(list(words)))
            for pcm in pcm16_frames(kept, settings.audio_frame_bytes):
                pcm_bytes += len(pcm)
                chunk = encoder.encode(pcm)
                if chunk:
                    yield encode_sse(events.audio_chunk(seq=seq, sentence=0, data=chunk))
                    seq += 1
                    sent += len(chunk)
        tail = encoder.flush()
        if tail:
            yield encode_sse(events.audio_chunk(seq=seq, sentence=0, data=tail))
            seq += 1
            sent += len(tail)
    except Exception:
        logger.exception("request_id=<%s> | synthesis failed", job.request_id)
        yield encode_sse(events.error(code="internal", message="Speech synthesis failed for this request."))
        return
    yield encode_sse(
        events.synthesis_complete(
            audio_bytes=sent,
            total_duration_s=pcm_bytes / (engine.sample_rate * 2),
            elapsed_s=round(time.monotonic() - job.received_at, 4),
        )
    )
