"""The TTS session: one Leg 1 session over any :class:`~strands_voice.transport.FrameTransport`.

The session holds the logic every transport shares: request ids, strict ordering, decoding frames with
:mod:`strands_voice_protocol.frames`, the connect timeout, the silence timeout (applied only while audio is
owed),
a keepalive while nothing is owed, resume after a dropped connection, retry on ``busy``, and typed
events. Text chunks are sent the moment :meth:`TTSSession.synthesize` is called, without waiting for
earlier requests' audio: the endpoint pipelines them and answers strictly in order.

Resume (docs/reliability.md): the session remembers every request sent whose answer has not ended. When
the connection drops (or the endpoint closes it, refuses it with ``busy``/1013, or throttles), it
reconnects with bounded exponential backoff and jitter (:class:`~strands_voice.retry.RetryPolicy`)
and re-sends every unfinished request, in order. A completed request is never sent again, so no byte of
its audio is ever repeated. A request cut mid-audio is sent again with Leg 1 ``skip_samples``: the
endpoint sends its audio from where delivery stopped, and the session joins it on
(:class:`~strands_voice.seam.Seam`: a few ms of overlap dropped, any step faded out), so every sample is
delivered once and a player needs to do nothing; no event marks the seam. Against an endpoint that does
not know ``skip_samples`` (its ``synthesis_start`` does not echo it: the audio starts at sample 0) the
request is replayed WHOLE: the session first yields :class:`RequestRestarted` (the audio given for it so
far is void; a player drops or fades it), then the request's events again from :class:`RequestStarted`.
When the outage outlasts the policy's deadline, iteration raises the error that started it
(``connection_lost``, ``busy``, ...), once.

An ``error`` frame without ``request_id`` answers, in its place in the strict order of answers, a frame
the endpoint could not read (too large, not JSON): it settles at once the earliest request sent on this
connection whose answer has not begun (``RequestFailed`` with that request's id).

Example:
    ```python
    async with TTSSession(WebSocketTransport(url)) as session:
        await session.synthesize("Hello there.")
        await session.synthesize("How are you?")
        await session.finish()
        async for event in session:
            if isinstance(event, RequestRestarted):
                drop_partial(event.request_id)
            elif isinstance(event, AudioChunk):
                play(event.data)
    ```
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final

from strands_voice_protocol.errors import (
    FrameDecodeError,
    TransportErrorCode,
    TTSConnectionError,
    TTSError,
    TTSTimeoutError,
)
from strands_voice_protocol.frames import (
    Cancel,
    ClientMessage,
    Close,
    ErrorFrame,
    Keepalive,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    WordTimestamps,
    WordTiming,
    decode_server_frame,
    encode_client_message,
)

from strands_voice.retry import Backoff, RetryPolicy, is_retryable
from strands_voice.seam import Seam, keep_tail
from strands_voice.transport import FrameTransport

__all__ = [
    "DEFAULT_RETRY",
    "AudioChunk",
    "RequestCancelled",
    "RequestCompleted",
    "RequestFailed",
    "RequestRestarted",
    "RequestStarted",
    "SessionEvent",
    "TTSSession",
    "WordsReceived",
]

logger = logging.getLogger(__name__)

#: The retry policy of sessions created without one: an outage may last up to a minute (a restarting
#: container loads its model), delays from 0.25 s doubling to 5 s, half of each drawn at random.
DEFAULT_RETRY: Final = RetryPolicy()

#: Seconds between keepalive messages while nothing is owed (the endpoint's idle timeout is 300 s).
DEFAULT_KEEPALIVE_S: Final = 60.0


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
    """All audio of a request has arrived (its ``synthesis_complete``).

    For a request resumed at a sample, ``audio_bytes`` and ``duration_s`` count every byte given for it,
    on every connection (the endpoint's own figures count only what its last answer sent).
    """

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


@dataclass(frozen=True, slots=True)
class RequestRestarted:
    """The connection dropped while a request was answered, and the endpoint could not resume it at a
    sample (it does not know ``skip_samples``): it is replayed from its start.

    The ``dropped_bytes`` of audio already given for the request are void: a player drops (or fades out)
    what it still holds of them. The request's events follow again from :class:`RequestStarted`.
    """

    request_id: str
    dropped_bytes: int


SessionEvent = (
    RequestStarted
    | AudioChunk
    | RequestCompleted
    | RequestCancelled
    | RequestFailed
    | RequestRestarted
    | WordsReceived
)


@dataclass(slots=True)
class _Request:
    """One request the session owes an answer for."""

    request_id: str
    text: str
    voice: str | None
    speed: float | None
    normalize: bool | None = None
    timestamps: bool | None = None
    lang: str | None = None
    lexicon: Mapping[str, str] | None = None
    wire_id: str | None = None  # the id it was last sent under (None: not sent on this connection)
    generation: int = -1  # the connection it was last sent on
    attempts: int = 0
    cancelled: bool = False
    started: bool = False  # RequestStarted was given (and not voided by a RequestRestarted)
    answered: bool = False  # the endpoint began answering it on the current connection
    delivered: int = 0  # audio bytes given since RequestStarted
    tail: bytes = b""  # the last few ms given (a resume's overlap is compared with it)
    seam: Seam | None = None  # set while a cut request resumes with skip_samples
    resumed: bool = False  # audio continued past a seam (RequestCompleted then counts every byte given)
    sample_rate: int = 24_000
    words_until: int = 0  # the end (a char offset) of the words given so far


class TTSSession:
    """One Leg 1 session: many synthesis requests over one transport, events in arrival order.

    Iterate the session (``async for event in session``) from ONE task to receive events; call
    :meth:`synthesize`, :meth:`cancel` and :meth:`finish` from any task on the same event loop.
    Iteration ends after :meth:`finish` once nothing is owed any more. A dropped connection is resumed
    (see the module docstring) by the iterating task; when that fails for ``retry.deadline_s``, the
    iteration raises :class:`TTSConnectionError`. Silence while audio is owed raises
    :class:`TTSTimeoutError` (not retried: a silent endpoint is not a dropped one). Neither ever hangs.

    Args:
        transport: The connection to the endpoint; reconnected (``close`` then ``connect``) to resume.
        voice: Default voice for requests (None: the endpoint's default).
        speed: Default speed for requests (None: the endpoint's default).
        connect_timeout: Seconds one connection attempt may take.
        silence_timeout: Seconds the endpoint may stay silent while a request's audio is owed.
        request_id_prefix: Prefix of generated request ids (a random one when None).
        retry: When to resume and retry (:data:`DEFAULT_RETRY` when None; ``NO_RETRY`` turns it off).
        keepalive_s: Seconds between ``keepalive`` messages while nothing is owed, so a slow agent's
            session outlives the endpoint's idle timeout; None sends none.
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
        retry: RetryPolicy | None = None,
        keepalive_s: float | None = DEFAULT_KEEPALIVE_S,
    ) -> None:
        self.transport = transport
        self.voice = voice
        self.speed = speed
        self.connect_timeout = connect_timeout
        self.silence_timeout = silence_timeout
        self.retry = retry if retry is not None else DEFAULT_RETRY
        self.keepalive_s = keepalive_s
        self._prefix = request_id_prefix or uuid.uuid4().hex[:8]
        self._counter = itertools.count()
        # Requests sent and not yet ended, in the order sent (the order the endpoint answers them).
        self._owed: OrderedDict[str, _Request] = OrderedDict()
        self._by_wire: dict[str, _Request] = {}
        self._current: _Request | None = None  # the request whose audio is arriving now
        self._backoff = Backoff(self.retry)
        self._send_lock = asyncio.Lock()
        self._generation = 0
        self._down: TTSError | None = None  # why the connection is down (None: it is up)
        self._busy: _Request | None = None  # a request the endpoint answered `busy`
        self._failed: TTSError | None = None  # resume gave up: the session is over
        self._opened = False
        self._finished = False
        self._closed = False
        self._iterating = False
        self._receiving: asyncio.Future[str | bytes] | None = None
        self._wakeup: asyncio.Future[None] | None = None
        self._silence_from = 0.0
        #: How many times the session reconnected (resumes), for logs and tests.
        self.reconnects = 0

    @property
    def owed(self) -> list[str]:
        """Ids of requests sent whose answer has not ended yet, in order."""
        return list(self._owed)

    @property
    def is_open(self) -> bool:
        """True between a successful :meth:`open` and :meth:`close`."""
        return self._opened and not self._closed

    @property
    def is_connected(self) -> bool:
        """True while open and the connection is up (False during an outage being resumed)."""
        return self.is_open and self._down is None

    async def open(self) -> None:
        """Connect the transport; an endpoint that answers ``busy`` (1013, 429, 503) is retried.

        Raises:
            TTSTimeoutError: connecting took longer than ``connect_timeout``.
            TTSConnectionError: the endpoint could not be reached (not retried here: nothing is owed
                yet, so a wrong address fails fast), or stayed busy past the retry deadline.
        """
        if self._opened:
            return
        while True:
            try:
                await self._connect()
                break
            except TTSError as error:
                await self._close_transport()
                delay = self._backoff.next_delay(error) if error.code == "busy" else None
                if delay is None or self._closed:
                    raise
                logger.debug("code=<%s>, delay_s=<%.2f> | endpoint busy at open; retrying", error.code, delay)
                await self.retry.sleep(delay)
        self._backoff.reset()
        self._opened = True
        logger.debug("prefix=<%s> | session opened", self._prefix)

    async def _connect(self) -> None:
        try:
            async with asyncio.timeout(self.connect_timeout):
                await self.transport.connect()
        except TimeoutError:
            raise TTSTimeoutError(
                "connect_timeout",
                f"could not connect to the TTS endpoint within {self.connect_timeout} s",
                retryable=True,
            ) from None
        except TTSError:
            raise
        except OSError:
            logger.debug("could not connect", exc_info=True)
            raise TTSConnectionError(
                "connection_failed", "could not connect to the TTS endpoint", retryable=True
            ) from None

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
        lang: str | None = None,
        lexicon: Mapping[str, str] | None = None,
    ) -> str:
        """Send one text chunk for synthesis at once (earlier requests' audio is not waited for).

        While the connection is down the request is kept and sent, in order, once it is back.

        Args:
            text: The text to speak.
            request_id: The id to use; a fresh one when None.
            voice: The voice; the session's default when None.
            speed: The speed; the session's default when None.
            normalize: False reads the text as written; None leaves the endpoint's default (true).
            timestamps: True asks for :class:`WordsReceived` events before each segment's audio.
            lang: The language letter (``a``, ``j``, ...); None: the voice's.
            lexicon: ``{"word": "phonemes"}`` for this request.

        Returns:
            The request id; its events carry it.

        Raises:
            TTSConnectionError: the session is not open or was finished.
        """
        self._check_sendable()
        rid = request_id if request_id is not None else self.new_request_id()
        request = _Request(
            rid,
            text,
            voice if voice is not None else self.voice,
            speed if speed is not None else self.speed,
            normalize=normalize,
            timestamps=timestamps,
            lang=lang,
            lexicon=lexicon,
        )
        # Owed from before the send: the answer may arrive before send() returns. The silence clock
        # starts when audio becomes owed.
        if not self._owed:
            self._silence_from = asyncio.get_running_loop().time()
        self._owed[rid] = request
        self._wake()
        async with self._send_lock:
            if self._down is None and request.generation != self._generation:
                try:
                    await self._send_request(request)
                except TTSError as error:
                    if not is_retryable(error):
                        self._forget(request)
                        raise
                    self._mark_down(error)
        logger.debug("request_id=<%s>, chars=<%d> | text sent", rid, len(text))
        return rid

    async def cancel(self, request_id: str | None = None) -> None:
        """Cancel one request, or every owed one when ``request_id`` is None (barge-in).

        Audio that still arrives for a cancelled request is dropped; the request ends with a
        :class:`RequestCancelled` (or :class:`RequestCompleted` if it had already finished).
        """
        self._check_sendable(allow_finished=True)
        targets = [request_id] if request_id is not None else list(self._owed)
        wire_id: str | None = None
        for rid in targets:
            request = self._owed.get(rid)
            if request is not None:
                request.cancelled = True
                wire_id = request.wire_id
        self._wake()
        if request_id is not None and wire_id is None:
            return  # not on the wire: it ends locally
        await self._send_now(Cancel(request_id=wire_id if request_id is not None else None))
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
        await self._send_now(Close())

    async def _send_now(self, message: ClientMessage) -> None:
        """Send a control message if the connection is up; a failure marks it down (resume follows)."""
        async with self._send_lock:
            if self._down is not None:
                return  # resume sends what is still needed
            try:
                await self.transport.send(encode_client_message(message))
            except TTSError as error:
                logger.debug("code=<%s> | message not sent: connection down", error.code)
                self._mark_down(error)

    async def _send_request(self, request: _Request) -> None:
        """Send (or re-send, under a fresh wire id) one request; the caller holds the send lock."""
        if request.wire_id is not None:
            self._by_wire.pop(request.wire_id, None)
        wire_id = request.request_id if request.attempts == 0 else f"{request.request_id}~{request.attempts}"
        request.attempts += 1
        request.wire_id = wire_id
        request.generation = self._generation
        request.answered = False
        self._by_wire[wire_id] = request
        message = Synthesize(
            text=request.text,
            voice=request.voice,
            speed=request.speed,
            request_id=wire_id,
            normalize=request.normalize,
            timestamps=request.timestamps,
            skip_samples=None if request.seam is None else request.seam.skip_samples,
            lang=request.lang,
            lexicon=request.lexicon,
        )
        await self.transport.send(encode_client_message(message))

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
        if self._failed is not None:
            raise self._failed
        if not self._opened or self._closed:
            raise TTSConnectionError("connection_lost", "the TTS session is not open")
        if self._finished and not allow_finished:
            raise TTSConnectionError("connection_lost", "the TTS session takes no more requests")

    def _done(self) -> bool:
        return self._finished and not self._owed

    def _mark_down(self, error: TTSError) -> None:
        if self._down is None:
            logger.debug("code=<%s> | connection down", error.code)
            self._down = error
        self._wake()

    def _forget(self, request: _Request) -> None:
        self._owed.pop(request.request_id, None)
        if request.wire_id is not None:
            self._by_wire.pop(request.wire_id, None)
        if self._current is request:
            self._current = None

    def __aiter__(self) -> AsyncIterator[SessionEvent]:
        return self.events()

    async def events(self) -> AsyncIterator[SessionEvent]:
        """Receive the session's events in arrival order (see the class docstring for when it ends).

        Raises:
            TTSConnectionError: the connection dropped and could not be resumed within the deadline.
            TTSTimeoutError: the endpoint was silent for ``silence_timeout`` while audio was owed.
        """
        if self._iterating:
            raise RuntimeError("a TTSSession's events can be iterated by one consumer only")
        self._iterating = True
        try:
            while not self._done():
                try:
                    frame = await self._receive()
                except TTSError as error:
                    if self._closed or not is_retryable(error):
                        raise
                    for event in await self._resume(error):
                        yield event
                    continue
                if frame is None:
                    return
                for event in self._handle(frame):
                    yield event
                busy, self._busy = self._busy, None
                if busy is not None:
                    # Every request before it has ended (answers come in order): resume from it on a
                    # new connection, after a backoff (a `close` may already have gone out on this one).
                    busy_error = TTSConnectionError(
                        "busy", "the TTS endpoint is busy", busy.request_id, retryable=True
                    )
                    for event in await self._resume(busy_error):
                        yield event
        finally:
            self._iterating = False

    # ---- resume ------------------------------------------------------------------------------------

    async def _resume(self, cause: TTSError) -> list[SessionEvent]:
        """Reconnect and re-send every unfinished request; the events to give first.

        Raises:
            TTSError: ``cause`` (as a non-retryable error) once the retry deadline leaves no attempt.
        """
        self._mark_down(cause)
        events = self._cut_answers()
        self._current = None
        await self._drop_receive()
        await self._close_transport()
        if self._done():
            return events
        if not any(not request.cancelled for request in self._owed.values()) and not self._finished:
            return events  # nothing to resume for yet: reconnect when a request comes
        while True:
            delay = self._backoff.next_delay(cause)
            if delay is None:
                raise self._gave_up()
            logger.debug("code=<%s>, delay_s=<%.2f> | reconnecting", cause.code, delay)
            await self.retry.sleep(delay)
            if self._closed:
                raise TTSConnectionError("connection_lost", "the TTS session is closed")
            try:
                await self._connect()
            except TTSError as error:
                await self._close_transport()
                if not is_retryable(error):
                    raise
                continue
            if self._closed:
                await self._close_transport()
                raise TTSConnectionError("connection_lost", "the TTS session is closed")
            break
        self.reconnects += 1
        self._generation += 1
        self._down = None
        self._silence_from = asyncio.get_running_loop().time()
        events.extend(self._end_cancelled_unsent())
        await self._send_unsent(close=self._finished)
        logger.debug("reconnects=<%d>, resent=<%d> | session resumed", self.reconnects, len(self._owed))
        return events

    def _cut_answers(self) -> list[SessionEvent]:
        """The connection is lost: every owed request is sent again; one whose audio began resumes at
        the sample where delivery stopped (a :class:`Seam`). The events: cancelled requests ended."""
        for request in self._owed.values():
            if request.wire_id is not None:
                self._by_wire.pop(request.wire_id, None)
            request.generation = -1
            if request.started and not request.cancelled:
                request.seam = Seam(request.delivered, request.tail)
                logger.debug(
                    "request_id=<%s>, delivered_bytes=<%d>, skip_samples=<%d> | resuming at a sample",
                    request.request_id,
                    request.delivered,
                    request.seam.skip_samples,
                )
        return self._end_cancelled_unsent()

    def _end_cancelled_unsent(self) -> list[SessionEvent]:
        """Cancelled requests not on the current connection end here (nothing will answer them)."""
        ended = [r for r in self._owed.values() if r.cancelled and r.generation != self._generation]
        for request in ended:
            self._forget(request)
        return [RequestCancelled(request.request_id) for request in ended]

    async def _send_unsent(self, *, close: bool = False) -> None:
        """Send, in order, every owed request not yet on the current connection (then ``close``)."""
        async with self._send_lock:
            try:
                for request in list(self._owed.values()):
                    if request.generation != self._generation and not request.cancelled:
                        await self._send_request(request)
                if close:
                    await self.transport.send(encode_client_message(Close()))
            except TTSError as error:
                if not is_retryable(error):
                    raise
                self._mark_down(error)

    async def _drop_receive(self) -> None:
        receiving, self._receiving = self._receiving, None
        if receiving is None:
            return
        if not receiving.done():
            receiving.cancel()
            await asyncio.wait({receiving}, timeout=1.0)
        elif not receiving.cancelled():
            receiving.exception()

    def _gave_up(self) -> TTSError:
        cause = self._backoff.cause or self._down
        code: TransportErrorCode = (
            cause.code if isinstance(cause, TTSConnectionError | TTSTimeoutError) else "connection_lost"
        )
        live = [rid for rid, request in self._owed.items() if not request.cancelled]
        message = (
            f"speech stopped: the TTS endpoint could not be reached again within {self.retry.deadline_s:g} s"
            if self.retry.enabled
            else "speech stopped: the connection to the TTS endpoint was lost"
        )
        logger.debug("code=<%s>, owed=<%d> | giving up", code, len(live))
        self._failed = TTSConnectionError(code, message, live[0] if live else None)
        return self._failed

    # ---- receive -----------------------------------------------------------------------------------

    def _wake(self) -> None:
        """Wake a waiting receiver so it re-reads the owed set (a new request, or finish)."""
        if self._wakeup is not None and not self._wakeup.done():
            self._wakeup.set_result(None)

    async def _receive(self) -> str | bytes | None:
        """The next frame; None when iteration should end (finished and nothing owed).

        One receive is kept pending across calls (never cancelled half-way), so a transport whose
        ``receive`` is not cancellation-safe loses nothing; :meth:`close` cancels it.

        Raises:
            TTSError: the connection is down (retryable: resume), or the endpoint went silent.
        """
        loop = asyncio.get_running_loop()
        # The silence clock runs only while someone listens: a reader that was away (a slow consumer,
        # whose backpressure also pauses the endpoint) must not find the endpoint "silent" on return.
        self._silence_from = max(self._silence_from, loop.time())
        while True:
            if self._closed:
                raise TTSConnectionError("connection_lost", "the TTS session is closed")
            if self._done():
                return None
            if self._down is not None:
                if self._owed or self._finished:
                    raise self._down
                await self._wait_for_wakeup(None)  # down and nothing owed: wait for a request
                continue
            if self._receiving is None:
                self._receiving = asyncio.ensure_future(self.transport.receive())
            owed = any(not request.cancelled for request in self._owed.values()) or bool(self._owed)
            timeout: float | None = None
            if owed:
                timeout = max(self._silence_from + self.silence_timeout - loop.time(), 0.0)
            elif self.keepalive_s is not None and not self._finished:
                timeout = self.keepalive_s
            receiving = self._receiving
            if await self._wait_for_wakeup(timeout, receiving):
                if self._receiving is receiving:
                    self._receiving = None
                if self._closed:
                    raise TTSConnectionError("connection_lost", "the TTS session is closed")
                self._silence_from = loop.time()
                return self._frame_or_end(receiving)
            if self._down is not None or self._closed:
                continue
            if self._owed and loop.time() >= self._silence_from + self.silence_timeout:
                rid = next(iter(self._owed))
                raise TTSTimeoutError(
                    "silence_timeout", f"the TTS endpoint sent nothing for {self.silence_timeout} s", rid
                )
            if not self._owed and timeout is not None and self.keepalive_s is not None:
                await self._send_now(Keepalive())
                logger.debug("keepalive sent")

    async def _wait_for_wakeup(
        self, limit_s: float | None, receiving: asyncio.Future[str | bytes] | None = None
    ) -> bool:
        """Wait for ``receiving``, a wakeup or ``limit_s``; True when ``receiving`` is done."""
        self._wakeup = asyncio.get_running_loop().create_future()
        waiting: set[asyncio.Future[Any]] = {self._wakeup}
        if receiving is not None:
            waiting.add(receiving)
        try:
            done, _ = await asyncio.wait(waiting, timeout=limit_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._wakeup.cancel()
            self._wakeup = None
        return receiving is not None and receiving in done

    def _frame_or_end(self, receiving: asyncio.Future[str | bytes]) -> str | bytes | None:
        try:
            return receiving.result()
        except EOFError:
            if self._done() or (self._finished and not any(not r.cancelled for r in self._owed.values())):
                self._owed.clear()
                self._by_wire.clear()
                return None
            # A normal close while the session is still in use (idle timeout, a server going away):
            # resumed like a drop, at once if audio is owed, else when the next request comes.
            live = [rid for rid, request in self._owed.items() if not request.cancelled]
            raise TTSConnectionError(
                "connection_lost",
                "the TTS endpoint closed the session",
                live[0] if live else None,
                retryable=True,
            ) from None

    def _handle(self, frame: str | bytes) -> list[SessionEvent]:
        try:
            message = decode_server_frame(frame)
        except FrameDecodeError:
            logger.warning("unreadable control frame from the endpoint; ignored")
            return []
        if isinstance(message, bytes):
            return self._audio(message)
        if isinstance(message, SynthesisStart):
            return self._started(message)
        if isinstance(message, SynthesisComplete):
            request = self._end(message.request_id)
            if request is None:
                return []
            self._backoff.reset()  # something finished: any outage is over
            if request.cancelled:
                return [RequestCancelled(request.request_id)]
            logger.debug("request_id=<%s> | audio complete", request.request_id)
            if request.resumed:  # the endpoint counted what it sent on the last connection only
                duration = request.delivered / (2 * request.sample_rate)
                return [RequestCompleted(request.request_id, request.delivered, duration, message.elapsed_s)]
            return [
                RequestCompleted(
                    request.request_id, message.audio_bytes, message.total_duration_s, message.elapsed_s
                )
            ]
        if isinstance(message, SynthesisCancelled):
            request = self._end(message.request_id)
            return [] if request is None else [RequestCancelled(request.request_id)]
        if isinstance(message, WordTimestamps):
            return self._words(message)
        assert isinstance(message, ErrorFrame)
        if message.request_id is None:
            return self._error_without_id(message)
        request = self._by_wire.get(message.request_id)
        if request is None:
            return []
        request.answered = True
        if message.code == "busy" and not request.cancelled and self.retry.enabled:
            self._busy = request
            return []
        self._end(message.request_id)
        logger.debug("request_id=<%s>, code=<%s> | request failed", request.request_id, message.code)
        return [RequestFailed(request.request_id, message.code, message.message)]

    def _audio(self, data: bytes) -> list[SessionEvent]:
        request = self._current
        if request is None or request.cancelled or not data:
            return []  # outside a request, or a cancelled (or replaced) one: dropped
        if request.seam is not None:
            data = request.seam.feed(data)
            if request.seam.joined:
                request.seam = None
            if not data:
                return []
        request.delivered += len(data)
        request.tail = keep_tail(request.tail, data)
        return [AudioChunk(request.request_id, data)]

    def _started(self, message: SynthesisStart) -> list[SessionEvent]:
        request = self._by_wire.get(message.request_id)
        self._current = request
        if request is None:
            logger.debug("request_id=<%s> | start of an unknown request; ignored", message.request_id)
            return []
        request.answered = True
        if request.cancelled:
            return []
        events: list[SessionEvent] = []
        if request.seam is not None:
            if message.skip_samples == request.seam.skip_samples:
                request.resumed = True
                logger.debug("request_id=<%s> | resumed at a sample", request.request_id)
                return []  # the listener already has this request's start; its audio continues
            # An endpoint that does not know skip_samples answers from sample 0: replay it whole.
            events.append(RequestRestarted(request.request_id, request.delivered))
            logger.debug(
                "request_id=<%s>, dropped_bytes=<%d> | no skip_samples echo; replaying whole",
                request.request_id,
                request.delivered,
            )
            request.seam = None
            request.resumed = False
            request.delivered = 0
            request.tail = b""
            request.words_until = 0
        request.started = True
        request.sample_rate = message.sample_rate
        events.append(
            RequestStarted(request.request_id, message.format, message.sample_rate, message.channels)
        )
        return events

    def _words(self, message: WordTimestamps) -> list[SessionEvent]:
        request = self._by_wire.get(message.request_id)
        if request is None or request.cancelled:
            return []  # cancelled (or unknown) request
        words = message.words
        if request.resumed:
            # A resumed answer repeats the words of the segment it was cut in: they were given already.
            words = tuple(word for word in words if word.char_start >= request.words_until)
        if not words:
            return []
        request.words_until = max(request.words_until, *(word.char_end for word in words))
        return [WordsReceived(request.request_id, words)]

    def _error_without_id(self, message: ErrorFrame) -> list[SessionEvent]:
        """An ``error`` naming no request: the answer to a frame the endpoint could not read.

        Answers come strictly in order, and the session sends only well-formed control frames, so the
        unreadable frame was the earliest request on this connection whose answer has not begun.
        """
        if message.code == "busy":
            # The session itself was refused (a 1013 close follows): resumed like a drop.
            logger.debug("endpoint busy; the close that follows is retried")
            return []
        request = next(
            (r for r in self._owed.values() if r.generation == self._generation and not r.answered), None
        )
        if request is None:
            logger.debug("code=<%s> | endpoint error without a request", message.code)
            return [RequestFailed(None, message.code, message.message)]
        self._forget(request)
        logger.debug(
            "request_id=<%s>, code=<%s> | unreadable request failed", request.request_id, message.code
        )
        if request.cancelled:
            return [RequestCancelled(request.request_id)]
        return [RequestFailed(request.request_id, message.code, message.message)]

    def _end(self, wire_id: str) -> _Request | None:
        """Forget the owed request sent as ``wire_id``; None if no owed request was."""
        request = self._by_wire.get(wire_id)
        if request is None:
            return None
        self._forget(request)
        return request

    async def __aenter__(self) -> TTSSession:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
