"""One Leg 1 WebSocket session: many requests, answered in order, synthesized ahead, cancellable.

Three tracked tasks per session (plus a watchdog that closes it once idle for ``idle_timeout_s`` or open
for ``max_session_s``):

- receive: decodes each frame (text or binary), answers bad input with an ``error`` frame in order
  (and stops reading while ``MAX_QUEUED_ERRORS`` of them are unsent), queues valid requests, and handles
  ``cancel`` / ``close`` at once;
- produce: synthesizes the queued requests in order, segment by segment through the shared
  :class:`~kokoro_endpoint.scheduling.scheduler.SynthesisScheduler`, up to ``pipeline_depth`` requests ahead
  of the sender (so request N+1 is synthesized while N's audio is being sent) and at most
  ``AUDIO_BUFFER_SEGMENTS`` segments ahead of it within a request (backpressure: a client that stops
  reading stops the synthesis; the session submits no further step, so the shared scheduler's worker goes
  to the other sessions);
- send: the only writer; walks the requests in order and never interleaves two requests' audio; a client
  that takes no frame for ``send_timeout_s`` (it stopped reading) ends the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from typing import Final

from starlette.websockets import WebSocket, WebSocketDisconnect
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import (
    Cancel,
    Close,
    ErrorFrame,
    Keepalive,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    WordTimestamps,
    decode_client_message,
    encode_server_message,
)

from kokoro_endpoint.engines.interface import Engine
from kokoro_endpoint.engines.pipeline import audio_seconds, synthesize_segments
from kokoro_endpoint.engines.silence import session_policy
from kokoro_endpoint.scheduling.interrupt import Interrupt
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from kokoro_endpoint.serving.audio_out import SampleSkip, pcm16_frames, to_pcm16
from kokoro_endpoint.serving.session_request import AUDIO_BUFFER_SEGMENTS, DONE, FAILED, SessionRequest
from kokoro_endpoint.serving.synthesis_job import error_from_decode, validate_synthesize
from kokoro_endpoint.settings import Settings

__all__ = ["AUDIO_BUFFER_SEGMENTS", "MAX_QUEUED_ERRORS", "EndpointSession"]

logger = logging.getLogger(__name__)


#: Error frames a session may hold unsent. A client that keeps sending bad frames without reading the
#: answers is not read any further until they drain, so its flood costs the endpoint bounded memory.
MAX_QUEUED_ERRORS: Final = 32


_Outgoing = SessionRequest | ErrorFrame | None  # None: the client asked to close


class EndpointSession:
    """Serves one accepted WebSocket until the client closes, disconnects or idles out.

    Args:
        websocket: The accepted WebSocket.
        engine: The loaded engine.
        scheduler: The shared synthesis scheduler.
        settings: Limits.
    """

    def __init__(
        self, websocket: WebSocket, engine: Engine, scheduler: SynthesisScheduler, settings: Settings
    ) -> None:
        self._ws = websocket
        self._engine = engine
        self._scheduler = scheduler
        self._settings = settings
        self._outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
        self._error_slots = asyncio.Semaphore(MAX_QUEUED_ERRORS)
        self._to_synthesize: asyncio.Queue[SessionRequest | None] = asyncio.Queue()
        self._live: dict[str, list[SessionRequest]] = defaultdict(list)
        self._unfinished = 0
        self._permits = asyncio.Semaphore(settings.pipeline_depth)
        self._closing = False
        self._last_activity = self._opened_at = time.monotonic()
        self._send_timeout = settings.send_timeout_s
        self._bytes_per_second = engine.sample_rate * 2
        self._silence = settings.silence
        # The listener's playback clock, shared by the session's requests (deadline scheduling).
        self._playback = scheduler.playback(session=True)
        self._setup_error: ErrorFrame | None = None
        try:
            self._silence = session_policy(settings.silence, getattr(websocket, "query_params", {}))
        except ValueError as error:
            self._setup_error = ErrorFrame("invalid_request", f"{error}; the defaults apply.")

    async def run(self) -> None:
        """Run the session's tasks until it ends, then stop them all (with a timeout)."""
        receive = asyncio.create_task(self._receive_loop(), name="ws-receive")
        produce = asyncio.create_task(self._produce_loop(), name="ws-produce")
        send = asyncio.create_task(self._send_loop(), name="ws-send")
        watchdog = asyncio.create_task(self._idle_watchdog(), name="ws-idle")
        tasks: list[asyncio.Task[None]] = [receive, produce, send, watchdog]
        if self._setup_error is not None:
            await self._queue_error(self._setup_error)
        try:
            await asyncio.wait([receive, send, watchdog], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for requests in self._live.values():
                for request in requests:
                    request.cancel()
            # Nothing else reads these tasks' exceptions: log them.
            await cancel_and_wait(tasks, self._settings.close_timeout_s, log_failures=True)
            self._scheduler.forget(self._playback)
        logger.debug("session ended")

    # receive ---------------------------------------------------------------------------------------

    async def _receive_loop(self) -> None:
        while True:
            message = await self._ws.receive()
            if message["type"] == "websocket.disconnect":
                logger.debug("code=<%s> | client disconnected", message.get("code"))
                return
            self._last_activity = time.monotonic()
            text = message.get("text")
            data: str | bytes | None = text if text is not None else message.get("bytes")
            if data is None:
                continue
            if self._closing:
                self._cancel_after_close(data)
                continue
            size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8"))
            if size > self._settings.max_frame_bytes:
                await self._queue_error(
                    ErrorFrame(
                        "invalid_request",
                        f"The message is larger than {self._settings.max_frame_bytes} bytes.",
                    )
                )
                continue
            try:
                decoded = decode_client_message(data)
            except FrameDecodeError as error:
                await self._queue_error(error_from_decode(error))
                continue
            if isinstance(decoded, Synthesize):
                refused = self._accept(decoded)
                if refused is not None:
                    await self._queue_error(refused)
            elif isinstance(decoded, Cancel):
                self._cancel(decoded.request_id)
            elif isinstance(decoded, Keepalive):
                logger.debug("keepalive")  # its only effect: the activity counted above
            elif isinstance(decoded, Close):
                self._closing = True
                self._outbox.put_nowait(None)
                self._to_synthesize.put_nowait(None)

    def _cancel_after_close(self, data: str | bytes) -> None:
        """After ``close`` only a ``cancel`` counts (a barge-in still drops what is owed), unanswered."""
        with contextlib.suppress(FrameDecodeError):
            decoded = decode_client_message(data)
            if isinstance(decoded, Cancel):
                self._cancel(decoded.request_id)

    async def _queue_error(self, error: ErrorFrame) -> None:
        # Waits (and so stops reading the socket) while MAX_QUEUED_ERRORS answers are still unsent.
        await self._error_slots.acquire()
        self._outbox.put_nowait(error)

    def _accept(self, message: Synthesize) -> ErrorFrame | None:
        """Queue a valid request; return the error frame that answers an invalid or unwelcome one."""
        result = validate_synthesize(message, self._engine, self._settings)
        if isinstance(result, ErrorFrame):
            return result
        if self._unfinished >= self._settings.max_pending_requests:
            return ErrorFrame("busy", "Too many requests are waiting in this session.", result.request_id)
        # A new answer (nothing owed, nothing playing) is a newcomer: refused before any audio when the
        # engine cannot feed it beside the listeners it feeds now (the client resumes after a backoff).
        refusal = None if self._unfinished else self._scheduler.refusal(self._playback)
        if refusal is not None:
            logger.info("request_id=<%s>, reason=<%s> | request refused", result.request_id, refusal)
            return ErrorFrame(
                "busy", f"The endpoint cannot keep one more listener fed ({refusal}).", result.request_id
            )
        request = SessionRequest(result)
        self._unfinished += 1
        self._live[result.request_id].append(request)
        self._outbox.put_nowait(request)
        self._to_synthesize.put_nowait(request)
        logger.debug("request_id=<%s>, chars=<%d> | request queued", result.request_id, len(result.text))
        return None

    def _cancel(self, request_id: str | None) -> None:
        if request_id is None:
            targets = [request for requests in self._live.values() for request in requests]
        else:
            targets = list(self._live.get(request_id, ()))
        for request in targets:
            request.cancel()
        if request_id is None:
            # The listener dropped what it was owed (a barge-in): it no longer holds a place, so the
            # caller's next answer, on a new session, is not refused because of this one.
            self._scheduler.forget(self._playback)
        logger.debug("request_id=<%s>, cancelled=<%d> | cancel", request_id, len(targets))

    # produce ---------------------------------------------------------------------------------------

    async def _produce_loop(self) -> None:
        while True:
            request = await self._to_synthesize.get()
            if request is None:
                return
            if request.cancelled:
                continue
            await self._permits.acquire()
            request.holds_permit = True
            if request.cancelled:  # cancelled (and maybe already answered) while we waited
                self._release(request)
                continue
            await self._synthesize(request)

    async def _synthesize(self, request: SessionRequest) -> None:
        job = request.job
        interrupt = Interrupt()
        skip = SampleSkip(job.skip_samples or 0, self._engine.sample_rate)
        try:
            request.stream = stream = self._scheduler.stream(
                synthesize_segments(
                    self._engine,
                    job.text,
                    job.voice,
                    job.speed,
                    self._settings.clause_chars,
                    self._silence,
                    normalize=job.normalize,
                    timestamps=job.timestamps,
                    reading=job.reading,
                    interrupt=interrupt,
                ),
                self._playback,
                audio_seconds(self._engine.sample_rate),
                interrupt,
            )
            while not request.cancelled:
                segment = await stream.next()
                if request.cancelled:
                    return
                if segment is None:
                    await request.audio.put(DONE)
                    return
                pcm, words = skip.take_segment(to_pcm16(segment.audio), segment.words)
                if not pcm:
                    continue  # the client has all of this segment (skip_samples)
                # Waits while the sender is AUDIO_BUFFER_SEGMENTS behind; the next step is submitted
                # only after that, so a stalled client holds no scheduler worker.
                frames = list(pcm16_frames(pcm, self._settings.audio_frame_bytes))
                await request.audio.put((words, frames))
        except Exception:
            logger.exception("request_id=<%s> | synthesis failed", job.request_id)
            if not request.cancelled:
                await request.audio.put(FAILED)
        finally:
            if request.stream is not None:
                request.stream.close()

    def _release(self, request: SessionRequest) -> None:
        if request.holds_permit:
            request.holds_permit = False
            self._permits.release()

    # send ------------------------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        try:
            await self._send_all()
        except (WebSocketDisconnect, OSError, RuntimeError) as error:
            # The client went away mid-send (starlette raises RuntimeError after a close).
            logger.debug("error=<%s> | send failed; ending the session", type(error).__name__)
        except TimeoutError:
            # It stopped reading (a proxy in front of it keeps the connection and its keepalives alive).
            logger.info(
                "send_timeout_s=<%s> | the client stopped reading; ending the session", self._send_timeout
            )

    async def _send(self, frame: str | bytes) -> None:
        """Send one frame, or raise TimeoutError when the client has not taken it within the send timeout."""
        send = self._ws.send_text(frame) if isinstance(frame, str) else self._ws.send_bytes(frame)
        await asyncio.wait_for(send, self._send_timeout)

    async def _send_all(self) -> None:
        while True:
            item = await self._outbox.get()
            if item is None:
                logger.debug("closing the session at the client's request")
                await asyncio.wait_for(self._ws.close(code=1000), self._send_timeout)
                return
            if isinstance(item, ErrorFrame):
                await self._send(encode_server_message(item))
                self._error_slots.release()
                continue
            try:
                await self._send_request(item)
            finally:
                self._finish(item)

    async def _send_request(self, request: SessionRequest) -> None:
        job = request.job
        rid = job.request_id
        if request.cancelled:
            await self._send(encode_server_message(SynthesisCancelled(rid)))
            return
        await self._send(
            encode_server_message(
                SynthesisStart(rid, sample_rate=self._engine.sample_rate, skip_samples=job.skip_samples)
            )
        )
        sent = 0
        while True:
            item = await request.audio.get()
            if request.cancelled:
                await self._send(encode_server_message(SynthesisCancelled(rid)))
                logger.debug("request_id=<%s>, audio_bytes=<%d> | cancelled", rid, sent)
                return
            if isinstance(item, tuple):
                words, frames = item
                if words:
                    stamps = WordTimestamps(rid, words)
                    await self._send(encode_server_message(stamps))
                for frame in frames:
                    if request.cancelled:
                        break  # the loop's next get() finds the wake-up marker and answers the cancel
                    await self._send(frame)
                    sent += len(frame)
            elif item is DONE:
                complete = SynthesisComplete(
                    request_id=rid,
                    audio_bytes=sent,
                    total_duration_s=sent / self._bytes_per_second,
                    elapsed_s=round(time.monotonic() - job.received_at, 4),
                )
                await self._send(encode_server_message(complete))
                logger.debug("request_id=<%s>, audio_bytes=<%d> | complete", rid, sent)
                return
            elif item is FAILED:
                error = ErrorFrame("internal", "Speech synthesis failed for this request.", rid)
                await self._send(encode_server_message(error))
                return

    def _finish(self, request: SessionRequest) -> None:
        self._release(request)
        self._unfinished -= 1
        self._last_activity = time.monotonic()
        requests = self._live.get(request.job.request_id)
        if requests is not None:
            if request in requests:
                requests.remove(request)
            if not requests:
                del self._live[request.job.request_id]

    # idle ------------------------------------------------------------------------------------------

    async def _idle_watchdog(self) -> None:
        """Close the session once it has been idle for ``idle_timeout_s`` or open for ``max_session_s``."""
        timeout, max_age = self._settings.idle_timeout_s, self._settings.max_session_s
        while True:
            now = time.monotonic()
            if self._unfinished or not self._outbox.empty():
                self._last_activity = now
            idle_left = self._last_activity + timeout - now
            age_left = self._opened_at + max_age - now
            if idle_left <= 0:
                logger.info("idle_timeout_s=<%s> | closing an idle session", timeout)
                await self._close(1000, "idle timeout")
                return
            if age_left <= 0:
                # 1001: a client with audio owed reconnects and resumes; one that stopped reading is gone.
                logger.info("max_session_s=<%s> | closing a session at its maximum age", max_age)
                await self._close(1001, "session too old")
                return
            await asyncio.sleep(min(idle_left, age_left, 1.0))

    async def _close(self, code: int, reason: str) -> None:
        """Close the WebSocket, giving up after the send timeout (a client that reads nothing)."""
        with contextlib.suppress(TimeoutError, WebSocketDisconnect, OSError, RuntimeError):
            await asyncio.wait_for(self._ws.close(code=code, reason=reason), self._send_timeout)
