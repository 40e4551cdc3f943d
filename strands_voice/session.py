"""The TTS session: one Leg 1 session over any :class:`~strands_voice.transport.FrameTransport`.

The session holds the logic every transport shares: request ids, strict ordering, decoding frames with
:mod:`strands_voice.frames`, the connect timeout, the silence timeout (applied only while audio is owed),
and typed events. Text chunks are sent the moment :meth:`TTSSession.synthesize` is called, without
waiting for earlier requests' audio: the endpoint pipelines them and answers strictly in order.

Example:
    ```python
    async with TTSSession(WebSocketTransport(url)) as session:
        await session.synthesize("Hello there.")
        await session.synthesize("How are you?")
        await session.finish()
        async for event in session:
            if isinstance(event, AudioChunk):
                play(event.data)
    ```
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from strands_voice.errors import FrameDecodeError, TTSConnectionError, TTSError, TTSTimeoutError
from strands_voice.frames import (
    Cancel,
    Close,
    ErrorFrame,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    WordTimestamps,
    WordTiming,
    decode_server_frame,
    encode_client_message,
)
from strands_voice.transport import FrameTransport

__all__ = [
    "AudioChunk",
    "RequestCancelled",
    "RequestCompleted",
    "RequestFailed",
    "RequestStarted",
    "SessionEvent",
    "TTSSession",
    "WordsReceived",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RequestStarted:
    """The endpoint began answering a request (its ``synthesis_start``)."""

    request_id: str
    format: str
    sample_rate: int
    channels: int


@dataclass(frozen=True, slots=True)
class AudioChunk:
    """A piece of a request's audio (pcm16 from the endpoint), in order."""

    request_id: str
    data: bytes


@dataclass(frozen=True, slots=True)
class RequestCompleted:
    """All audio of a request has arrived (its ``synthesis_complete``)."""

    request_id: str
    audio_bytes: int
    duration_s: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class RequestCancelled:
    """A cancelled request ended; no more audio for it follows."""

    request_id: str


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """The endpoint answered a request with an ``error`` frame; the session stays usable.

    ``request_id`` is None when the endpoint's error named no request.
    """

    request_id: str | None
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class WordsReceived:
    """The words of a request's next audio (its ``word_timestamps``, sent when ``timestamps=True``)."""

    request_id: str
    words: tuple[WordTiming, ...]


SessionEvent = (
    RequestStarted | AudioChunk | RequestCompleted | RequestCancelled | RequestFailed | WordsReceived
)


class TTSSession:
    """One Leg 1 session: many synthesis requests over one transport, events in arrival order.

    Iterate the session (``async for event in session``) from ONE task to receive events; call
    :meth:`synthesize`, :meth:`cancel` and :meth:`finish` from any task on the same event loop.
    Iteration ends after :meth:`finish` once nothing is owed any more (or the endpoint closed the
    session normally with nothing owed). A dropped connection raises :class:`TTSConnectionError` from
    the iteration; silence while audio is owed raises :class:`TTSTimeoutError`. Neither ever hangs.

    Args:
        transport: The connection to the endpoint.
        voice: Default voice for requests (None: the endpoint's default).
        speed: Default speed for requests (None: the endpoint's default).
        connect_timeout: Seconds :meth:`open` may take.
        silence_timeout: Seconds the endpoint may stay silent while a request's audio is owed.
        request_id_prefix: Prefix of generated request ids (a random one when None).
    """

    def __init__(
        self,
        transport: FrameTransport,
        *,
        voice: str | None = None,
        speed: float | None = None,
        connect_timeout: float = 10.0,
        silence_timeout: float = 30.0,
        request_id_prefix: str | None = None,
    ) -> None:
        self.transport = transport
        self.voice = voice
        self.speed = speed
        self.connect_timeout = connect_timeout
        self.silence_timeout = silence_timeout
        self._prefix = request_id_prefix or uuid.uuid4().hex[:8]
        self._counter = itertools.count()
        # Requests sent and not yet ended, in the order sent (the order the endpoint answers them).
        self._owed: OrderedDict[str, bool] = OrderedDict()  # request_id -> cancelled
        self._current: str | None = None  # the request whose audio is arriving now
        self._opened = False
        self._finished = False
        self._closed = False
        self._iterating = False
        self._receiving: asyncio.Future[str | bytes] | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._silence_from = 0.0
        self._closed_by_peer = False

    @property
    def owed(self) -> list[str]:
        """Ids of requests sent whose answer has not ended yet, in order."""
        return list(self._owed)

    @property
    def is_open(self) -> bool:
        """True between a successful :meth:`open` and :meth:`close`."""
        return self._opened and not self._closed

    async def open(self) -> None:
        """Connect the transport.

        Raises:
            TTSTimeoutError: connecting took longer than ``connect_timeout``.
            TTSConnectionError: the endpoint could not be reached.
        """
        if self._opened:
            return
        try:
            async with asyncio.timeout(self.connect_timeout):
                await self.transport.connect()
        except TimeoutError:
            await self._close_transport()
            raise TTSTimeoutError(
                "connect_timeout", f"could not connect to the TTS endpoint within {self.connect_timeout} s"
            ) from None
        except TTSError:
            await self._close_transport()
            raise
        except OSError:
            await self._close_transport()
            logger.debug("could not connect", exc_info=True)
            raise TTSConnectionError("connection_failed", "could not connect to the TTS endpoint") from None
        self._opened = True
        logger.debug("prefix=<%s> | session opened", self._prefix)

    def new_request_id(self) -> str:
        """A fresh request id, unique within this session."""
        return f"{self._prefix}-{next(self._counter)}"

    async def synthesize(
        self,
        text: str,
        *,
        request_id: str | None = None,
        voice: str | None = None,
        speed: float | None = None,
        normalize: bool | None = None,
        timestamps: bool | None = None,
    ) -> str:
        """Send one text chunk for synthesis at once (earlier requests' audio is not waited for).

        Args:
            text: The text to speak.
            request_id: The id to use; a fresh one when None.
            voice: The voice; the session's default when None.
            speed: The speed; the session's default when None.
            normalize: False reads the text as written; None leaves the endpoint's default (true).
            timestamps: True asks for :class:`WordsReceived` events before each segment's audio.

        Returns:
            The request id; its events carry it.

        Raises:
            TTSConnectionError: the session is not open, was finished, or the connection dropped.
        """
        self._check_sendable()
        rid = request_id if request_id is not None else self.new_request_id()
        message = Synthesize(
            text=text,
            voice=voice if voice is not None else self.voice,
            speed=speed if speed is not None else self.speed,
            request_id=rid,
            normalize=normalize,
            timestamps=timestamps,
        )
        # Owed from before the send: the answer may arrive before send() returns. The silence clock
        # starts when audio becomes owed.
        if not self._owed:
            self._silence_from = asyncio.get_running_loop().time()
        self._owed[rid] = False
        self._wake()
        try:
            await self.transport.send(encode_client_message(message))
        except BaseException:
            self._owed.pop(rid, None)
            raise
        logger.debug("request_id=<%s>, chars=<%d> | text sent", rid, len(text))
        return rid

    async def cancel(self, request_id: str | None = None) -> None:
        """Cancel one request, or every owed one when ``request_id`` is None (barge-in).

        Audio that still arrives for a cancelled request is dropped; the request ends with a
        :class:`RequestCancelled` (or :class:`RequestCompleted` if it had already finished).
        """
        self._check_sendable(allow_finished=True)
        targets = [request_id] if request_id is not None else list(self._owed)
        for rid in targets:
            if rid in self._owed:
                self._owed[rid] = True
        await self.transport.send(encode_client_message(Cancel(request_id=request_id)))
        logger.debug("request_id=<%s> | cancel sent", request_id or "*")

    async def finish(self) -> None:
        """Send no more requests: the endpoint finishes what was sent, then closes the session.

        Iteration ends once every owed request has ended. Safe to call more than once.
        """
        if self._finished or self._closed or not self._opened:
            self._finished = True
            self._wake()
            return
        self._finished = True
        self._wake()
        if self._closed_by_peer:
            return
        try:
            await self.transport.send(encode_client_message(Close()))
        except TTSConnectionError:
            logger.debug("close message not sent: connection already gone")

    async def close(self) -> None:
        """Close the connection now (owed audio is abandoned). Safe to call more than once."""
        if self._closed:
            return
        self._closed = True
        self._finished = True
        self._wake()
        receiving, self._receiving = self._receiving, None
        if receiving is not None and not receiving.done():
            receiving.cancel()
            # Bounded: a transport that ignores cancellation must not hang close().
            await asyncio.wait({receiving}, timeout=1.0)
        elif receiving is not None and not receiving.cancelled():
            receiving.exception()  # retrieved, so asyncio does not log "never retrieved"
        await self._close_transport()
        logger.debug("prefix=<%s>, abandoned=<%d> | session closed", self._prefix, len(self._owed))

    async def _close_transport(self) -> None:
        try:
            await self.transport.close()
        except Exception:
            logger.debug("transport close failed", exc_info=True)

    def _check_sendable(self, *, allow_finished: bool = False) -> None:
        if not self._opened or self._closed:
            raise TTSConnectionError("not_connected", "the TTS session is not open")
        if self._finished and not allow_finished:
            raise TTSConnectionError("session_finished", "the TTS session takes no more requests")

    def _done(self) -> bool:
        return self._finished and not self._owed

    def __aiter__(self) -> AsyncIterator[SessionEvent]:
        return self.events()

    async def events(self) -> AsyncIterator[SessionEvent]:
        """Receive the session's events in arrival order (see the class docstring for when it ends).

        Raises:
            TTSConnectionError: the connection dropped, or closed while audio was still owed.
            TTSTimeoutError: the endpoint was silent for ``silence_timeout`` while audio was owed.
        """
        if self._iterating:
            raise RuntimeError("a TTSSession's events can be iterated by one consumer only")
        self._iterating = True
        try:
            while not self._done():
                frame = await self._receive()
                if frame is None:
                    return
                event = self._handle(frame)
                if event is not None:
                    yield event
        finally:
            self._iterating = False

    def _wake(self) -> None:
        """Wake a waiting receiver so it re-reads the owed set (a new request, or finish)."""
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def _receive(self) -> str | bytes | None:
        """The next frame; None when iteration should end (finished, or a normal close, nothing owed).

        One receive is kept pending across calls (never cancelled half-way), so a transport whose
        ``receive`` is not cancellation-safe loses nothing; :meth:`close` cancels it.
        """
        loop = asyncio.get_running_loop()
        # The silence clock runs only while someone listens: a reader that was away (a slow consumer,
        # whose backpressure also pauses the endpoint) must not find the endpoint "silent" on return.
        self._silence_from = max(self._silence_from, loop.time())
        while True:
            if self._closed:
                raise TTSConnectionError("not_connected", "the TTS session is closed")
            if self._done():
                return None
            if self._receiving is None:
                self._receiving = asyncio.ensure_future(self.transport.receive())
            self._wakeup = loop.create_future()
            timeout = None
            if self._owed:
                timeout = max(self._silence_from + self.silence_timeout - loop.time(), 0.0)
            waiting: set[asyncio.Future[Any]] = {self._receiving, self._wakeup}
            try:
                done, _ = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._wakeup.cancel()
                self._wakeup = None
            if self._receiving in done:
                receiving, self._receiving = self._receiving, None
                self._silence_from = loop.time()
                return self._frame_or_end(receiving)
            if not done and self._owed and loop.time() >= self._silence_from + self.silence_timeout:
                rid = next(iter(self._owed))
                raise TTSTimeoutError(
                    "silence_timeout", f"the TTS endpoint sent nothing for {self.silence_timeout} s", rid
                )

    def _frame_or_end(self, receiving: asyncio.Future[str | bytes]) -> str | bytes | None:
        try:
            return receiving.result()
        except EOFError:
            live = [rid for rid, cancelled in self._owed.items() if not cancelled]
            self._closed_by_peer = True
            if live:
                raise TTSConnectionError(
                    "connection_closed", "the TTS endpoint closed the session while audio was owed", live[0]
                ) from None
            self._owed.clear()
            self._finished = True
            return None

    def _handle(self, frame: str | bytes) -> SessionEvent | None:
        try:
            message = decode_server_frame(frame)
        except FrameDecodeError:
            logger.warning("unreadable control frame from the endpoint; ignored")
            return None
        if isinstance(message, bytes):
            rid = self._current
            if rid is None:
                logger.debug("bytes=<%d> | audio outside a request; ignored", len(message))
                return None
            if self._owed.get(rid, True) or not message:
                return None  # cancelled (or unknown) request: drop its audio
            return AudioChunk(rid, message)
        if isinstance(message, SynthesisStart):
            if message.request_id not in self._owed:
                logger.debug("request_id=<%s> | start of an unknown request; ignored", message.request_id)
                return None
            self._current = message.request_id
            if self._owed[message.request_id]:
                return None
            return RequestStarted(message.request_id, message.format, message.sample_rate, message.channels)
        if isinstance(message, SynthesisComplete):
            cancelled = self._end(message.request_id)
            if cancelled is None:
                return None
            if cancelled:
                return RequestCancelled(message.request_id)
            logger.debug("request_id=<%s> | audio complete", message.request_id)
            return RequestCompleted(
                message.request_id, message.audio_bytes, message.total_duration_s, message.elapsed_s
            )
        if isinstance(message, SynthesisCancelled):
            if self._end(message.request_id) is None:
                return None
            return RequestCancelled(message.request_id)
        if isinstance(message, WordTimestamps):
            if self._owed.get(message.request_id, True):
                return None  # cancelled (or unknown) request
            return WordsReceived(message.request_id, message.words)
        assert isinstance(message, ErrorFrame)
        if message.request_id is not None:
            if self._end(message.request_id) is None:
                return None
        logger.debug("request_id=<%s>, code=<%s> | request failed", message.request_id, message.code)
        return RequestFailed(message.request_id, message.code, message.message)

    def _end(self, request_id: str) -> bool | None:
        """Forget an owed request; returns whether it was cancelled, or None if it was not owed."""
        if request_id == self._current:
            self._current = None
        return self._owed.pop(request_id, None)

    async def __aenter__(self) -> TTSSession:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
