"""Time the TTS endpoint alone with a raw ``websockets`` client (Leg 1 only, no session logic on top).

The library's ``TTSSession`` is deliberately not used here: this part measures what the endpoint itself
costs, so the client is the thinnest one the protocol allows.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass

from strands_voice_protocol import frames
from strands_voice_protocol.errors import TTSConnectionError, TTSRequestError, TTSTimeoutError
from strands_voice_protocol.wire import SAMPLE_RATE
from websockets.asyncio.client import ClientConnection, connect

from strands_voice_tools.audio_analysis import FirstHeard
from strands_voice_tools.bench.stats import simulate_playback

__all__ = ["RequestTiming", "measure_concurrent", "measure_request", "time_request"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RequestTiming:
    """One request's timing, on the client's clock.

    Attributes:
        ttfa_s: From sending the message to the first audio byte.
        total_s: From sending the message to ``synthesis_complete`` (or ``synthesis_cancelled``).
        audio_bytes: Audio bytes received.
        server_elapsed_s: The endpoint's own ``elapsed_s`` for the request (0 when cancelled).
        audio_duration_s: The endpoint's ``total_duration_s`` for the request (0 when cancelled).
        cancelled: The request was cancelled after its first audible sound.
        heard_s: From sending the message to when its first audible sound would be heard (the first
            10 ms window above -40 dBFS, on a player that starts with the first byte); None when the
            audio has no audible window.
        sound_offset_s: Where that sound is in the request's audio (the silence heard before it).
        stall_s: How long a real-time player starting at the first byte waited for audio before the end
            (``stats.simulate_playback``; also how much later it would have to start to never wait); None
            when cancelled.
    """

    ttfa_s: float
    total_s: float
    audio_bytes: int
    server_elapsed_s: float
    audio_duration_s: float
    cancelled: bool = False
    heard_s: float | None = None
    sound_offset_s: float | None = None
    stall_s: float | None = None


class _Arrivals:
    """One request's audio as it arrives: the first byte's time, the bytes, the first sound, the frames."""

    def __init__(self, rid: str, sample_rate: int, sink: bytearray | None) -> None:
        self.rid = rid
        self.started = time.perf_counter()
        self.first_audio: float | None = None
        self.audio_bytes = 0
        self.heard = FirstHeard(sample_rate)
        self.chunks: list[tuple[float, float]] = []  # (arrival, seconds of pcm16 audio) per frame
        self._sample_rate = sample_rate
        self._sink = sink

    def add(self, frame: bytes) -> bool:
        """Count one audio frame; whether it holds the request's first audible sound."""
        arrived = time.perf_counter()
        if self.first_audio is None:
            self.first_audio = arrived
        self.chunks.append((arrived - self.started, len(frame) / (2 * self._sample_rate)))
        self.audio_bytes += len(frame)
        if self._sink is not None:
            self._sink.extend(frame)
        return self.heard.feed(arrived - self.started, frame) is not None

    def cancelled(self, first_audio: float) -> RequestTiming:
        """The timing of a request cancelled after its first sound."""
        return RequestTiming(
            ttfa_s=first_audio - self.started,
            total_s=time.perf_counter() - self.started,
            audio_bytes=self.audio_bytes,
            server_elapsed_s=0.0,
            audio_duration_s=0.0,
            cancelled=True,
            heard_s=self.heard.heard_at,
            sound_offset_s=self.heard.sound_offset_s,
        )

    def completed(self, message: frames.SynthesisComplete) -> RequestTiming:
        """The timing of a request the endpoint completed."""
        finished = time.perf_counter()
        if self.first_audio is None:
            raise TTSRequestError("no_audio", "the request completed without audio", self.rid)
        ttfa_s = self.first_audio - self.started
        logger.debug("request_id=<%s>, ttfa_ms=<%.1f> | request timed", self.rid, ttfa_s * 1e3)
        return RequestTiming(
            ttfa_s=ttfa_s,
            total_s=finished - self.started,
            audio_bytes=self.audio_bytes,
            server_elapsed_s=message.elapsed_s,
            audio_duration_s=message.total_duration_s,
            heard_s=self.heard.heard_at,
            sound_offset_s=self.heard.sound_offset_s,
            stall_s=simulate_playback(self.chunks).stall_s,
        )


async def time_request(
    ws: ClientConnection,
    text: str,
    *,
    voice: str | None = None,
    request_id: str | None = None,
    cancel_after_first_audio: bool = False,
    sample_rate: int = SAMPLE_RATE,
    audio_sink: bytearray | None = None,
) -> RequestTiming:
    """Send one ``synthesize`` message on an open session and time it until ``synthesis_complete``.

    With ``cancel_after_first_audio`` the request is cancelled as soon as its first audible sound has
    arrived (only the times to first audio and first sound are wanted) and timed until
    ``synthesis_cancelled``. ``audio_sink``, when given, receives the request's audio bytes.

    Raises:
        TTSRequestError: the endpoint answered with an ``error`` frame.
        TTSConnectionError: the session closed before the request completed.
    """
    rid = request_id or uuid.uuid4().hex[:12]
    arrivals = _Arrivals(rid, sample_rate, audio_sink)
    await ws.send(frames.encode_client_message(frames.Synthesize(text=text, voice=voice, request_id=rid)))
    cancel_sent = False
    while True:
        try:
            frame = await ws.recv()
        except Exception as error:  # websockets raises ConnectionClosed* on any end of the session
            raise TTSConnectionError(
                "connection_lost", "the endpoint closed the session mid-request", rid
            ) from error
        if isinstance(frame, bytes):
            if arrivals.add(frame) and cancel_after_first_audio and not cancel_sent:
                cancel_sent = True
                await ws.send(frames.encode_client_message(frames.Cancel(request_id=rid)))
            continue
        message = frames.decode_server_control(frame)
        if isinstance(message, frames.ErrorFrame):
            raise TTSRequestError(message.code, message.message, rid)
        if isinstance(message, frames.SynthesisCancelled) and message.request_id == rid:
            if arrivals.first_audio is not None:
                return arrivals.cancelled(arrivals.first_audio)
        elif isinstance(message, frames.SynthesisComplete) and message.request_id == rid:
            return arrivals.completed(message)


async def _close_session(ws: ClientConnection) -> None:
    """Ask the endpoint to close (protocol ``close``), then close our side."""
    try:
        await ws.send(frames.encode_client_message(frames.Close()))
    except Exception:  # already closed: nothing to ask for
        logger.debug("session already closed")
    await ws.close()


async def measure_request(
    ws_url: str,
    text: str,
    *,
    voice: str | None = None,
    cancel_after_first_audio: bool = False,
    timeout_s: float = 300.0,
) -> RequestTiming:
    """Open a session, time one request on it (the connection's setup is not counted), close it.

    With ``cancel_after_first_audio`` the request is cancelled once its first sound arrived, and the call
    then waits as long again as the time to first audio: the segment the endpoint was already
    synthesizing ahead finishes in that time instead of slowing the next measurement.

    Raises:
        TTSTimeoutError: the request took longer than ``timeout_s``.
        TTSConnectionError, TTSRequestError: see :func:`time_request`.
    """
    try:
        async with asyncio.timeout(timeout_s):
            async with connect(ws_url, max_size=None, open_timeout=10.0) as ws:
                try:
                    timing = await time_request(
                        ws, text, voice=voice, cancel_after_first_audio=cancel_after_first_audio
                    )
                finally:
                    await _close_session(ws)
            if timing.cancelled:
                await asyncio.sleep(timing.ttfa_s)
            return timing
    except TimeoutError:
        raise TTSTimeoutError("silence_timeout", f"no synthesis_complete within {timeout_s} s") from None
    except OSError as error:
        raise TTSConnectionError("connection_failed", f"could not reach {ws_url}") from error


async def measure_concurrent(
    ws_url: str, text: str, sessions: int, *, voice: str | None = None, timeout_s: float = 300.0
) -> list[RequestTiming]:
    """Open ``sessions`` sessions, then send one request on each at the same moment; time each.

    All connections are open before any request is sent, so the figures are about synthesis under
    load, not about connection setup.

    Raises:
        TTSTimeoutError: the round took longer than ``timeout_s``.
        TTSConnectionError, TTSRequestError: a session failed (an error frame such as ``busy`` included).
    """
    try:
        async with asyncio.timeout(timeout_s):
            opened: list[ClientConnection] = []
            try:
                for _ in range(sessions):
                    opened.append(await connect(ws_url, max_size=None, open_timeout=10.0))
                try:
                    async with asyncio.TaskGroup() as group:
                        tasks = [group.create_task(time_request(ws, text, voice=voice)) for ws in opened]
                except ExceptionGroup as group_error:
                    # The first failure is the finding; the others are its consequences.
                    raise group_error.exceptions[0] from None
                return [task.result() for task in tasks]
            finally:
                async with asyncio.TaskGroup() as group:
                    for ws in opened:
                        group.create_task(_close_session(ws))
    except TimeoutError:
        raise TTSTimeoutError(
            "silence_timeout", f"{sessions} concurrent requests took over {timeout_s} s"
        ) from None
    except OSError as error:
        raise TTSConnectionError("connection_failed", f"could not reach {ws_url}") from error
