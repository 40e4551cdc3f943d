"""The asyncio TTS session: a thin driver that performs what :class:`~strands_voice.session._core.SessionCore`
decides.

The driver owns the I/O and nothing else: the transport (connect with a timeout, send under one lock,
one pending receive), the clock it reads (the retry policy's ``clock``), the timer, the retry policy's
``sleep`` and the one consumer's iteration. Every rule (resume, replay, ``busy``, keepalive, silence,
typed errors) is the core's; see :mod:`strands_voice.session` for the behaviour.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import uuid
from collections import deque
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Final

from strands_voice_protocol.errors import TTSError
from strands_voice_protocol.frames import encode_client_message
from strands_voice_protocol.limits import KEEPALIVE_S

from strands_voice.session._actions import Action, Deliver, Disconnect, End, Fail, Reconnect, Send, SetTimer
from strands_voice.session._connection import Wakeup, close_quietly, connect_within, drop_receive
from strands_voice.session._core import SessionCore, closed_error
from strands_voice.session._events import SessionEvent
from strands_voice.session._requests import OwedRequest
from strands_voice.session._retry import RetryPolicy
from strands_voice.transports import CONNECT_TIMEOUT_S, FrameTransport

__all__ = ["DEFAULT_RETRY", "SILENCE_TIMEOUT_S", "TTSSession"]

#: Seconds the TTS endpoint may stay silent while a request's audio is owed.
SILENCE_TIMEOUT_S: Final = 30.0

logger = logging.getLogger(__name__)

#: The retry policy of sessions created without one: an outage may last up to a minute (a restarting
#: container loads its model), delays from 0.25 s doubling to 5 s, half of each drawn at random.
DEFAULT_RETRY: Final = RetryPolicy()


class TTSSession:
    """One Leg 1 session: many synthesis requests over one transport, events in arrival order.

    Iterate the session (``async for event in session``) from ONE task to receive events; call
    :meth:`synthesize`, :meth:`cancel` and :meth:`finish` from any task on the same event loop.
    Iteration ends after :meth:`finish` once nothing is owed any more. A dropped connection is resumed
    (see :mod:`strands_voice.session`) by the iterating task; when that fails for ``retry.deadline_s``, the
    iteration raises :class:`TTSConnectionError`. Silence while audio is owed raises
    :class:`TTSTimeoutError` (not retried: a silent endpoint is not a dropped one). Neither ever hangs.

    Args:
        transport: The connection to the endpoint; reconnected (``close`` then ``connect``) to resume.
        connect_timeout: Seconds one connection attempt may take.
        silence_timeout: Seconds the endpoint may stay silent while a request's audio is owed.
        retry: When to resume and retry (:data:`DEFAULT_RETRY` when None; ``NO_RETRY`` turns it off); its
            ``clock`` is the session's clock.
        keepalive_s: Seconds between ``keepalive`` messages while nothing is owed, so a slow agent's
            session outlives the endpoint's idle timeout (:data:`~strands_voice_protocol.limits.KEEPALIVE_S`
            by default); None sends none.
        voice: Default voice for requests (None: the endpoint's default).
        speed: Default speed for requests (None: the endpoint's default).
        request_id_prefix: Prefix of generated request ids (a random one when None).
    """

    def __init__(
        self,
        transport: FrameTransport,
        *,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        silence_timeout: float = SILENCE_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        keepalive_s: float | None = KEEPALIVE_S,
        voice: str | None = None,
        speed: float | None = None,
        request_id_prefix: str | None = None,
    ) -> None:
        self.transport = transport
        self.voice = voice
        self.speed = speed
        self.connect_timeout = connect_timeout
        self.retry = retry if retry is not None else DEFAULT_RETRY
        self._core = SessionCore(retry=self.retry, silence_timeout=silence_timeout, keepalive_s=keepalive_s)
        self._prefix = request_id_prefix or uuid.uuid4().hex[:8]
        self._counter = itertools.count()
        self._send_lock = asyncio.Lock()
        self._pending: deque[Action] = deque()  # actions for the iterating task, in order
        self._timer_at: float | None = None
        self._iterating = False
        self._receiving: asyncio.Future[str | bytes] | None = None
        self._wakeup = Wakeup()

    @property
    def owed(self) -> list[str]:
        """Ids of requests sent whose answer has not ended yet, in order."""
        return list(self._core.book.owed)

    @property
    def reconnects(self) -> int:
        """How many times the session reconnected (resumes), for logs and tests."""
        return self._core.reconnects

    @property
    def is_open(self) -> bool:
        """True between a successful :meth:`open` and :meth:`close`."""
        return self._core.opened and not self._core.closed

    def _now(self) -> float:
        return self.retry.clock()

    async def open(self) -> None:
        """Connect the transport; an endpoint that answers ``busy`` (1013, 429, 503) is retried.

        Raises:
            TTSTimeoutError: connecting took longer than ``connect_timeout``.
            TTSConnectionError: the endpoint could not be reached (not retried here: nothing is owed
                yet, so a wrong address fails fast), or stayed busy past the retry deadline.
        """
        if self._core.opened:
            return
        while True:
            try:
                await self._connect()
                break
            except TTSError as error:
                await self._close_transport()
                action = self._core.open_failed(error, self._now())[0]
                if isinstance(action, Fail):
                    raise action.error from None
                assert isinstance(action, Reconnect)
                await self.retry.sleep(action.delay_s)
        self._take(self._core.opened_ok(self._now()))
        logger.debug("prefix=<%s> | session opened", self._prefix)

    async def _connect(self) -> None:
        await connect_within(self.transport, self.connect_timeout)

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
        rid = request_id if request_id is not None else self.new_request_id()
        request = OwedRequest(
            rid,
            text,
            voice if voice is not None else self.voice,
            speed if speed is not None else self.speed,
            normalize=normalize,
            timestamps=timestamps,
            lang=lang,
            lexicon=lexicon,
        )
        self._raise_or_take(self._core.submit(request, self._now()))
        self._wake()
        async with self._send_lock:
            failed = await self._send_locked(self._core.send_submitted(rid))
        if failed is not None:
            raise failed
        logger.debug("request_id=<%s>, chars=<%d> | text sent", rid, len(text))
        return rid

    async def cancel(self, request_id: str | None = None) -> None:
        """Cancel one request, or every owed one when ``request_id`` is None (barge-in).

        Audio that still arrives for a cancelled request is dropped; the request ends with a
        :class:`RequestCancelled` (or :class:`RequestCompleted` if it had already finished).
        """
        actions = self._core.cancel(request_id)
        self._wake()
        await self._perform_for_caller(actions)
        logger.debug("request_id=<%s> | cancelled", request_id or "*")

    async def finish(self) -> None:
        """Send no more requests: the endpoint finishes what was sent, then closes the session.

        Iteration ends once every owed request has ended. Safe to call more than once.
        """
        actions = self._core.finish()
        self._wake()
        await self._perform_for_caller(actions)

    async def close(self) -> None:
        """Close the connection now (owed audio is abandoned). Safe to call more than once."""
        if self._core.closed:
            return
        self._take(self._core.close())
        self._wake()
        await self._drop_receive()
        await self._close_transport()
        logger.debug("prefix=<%s>, abandoned=<%d> | session closed", self._prefix, len(self._core.book.owed))

    # ---- performing actions ------------------------------------------------------------------------

    def _take(self, actions: list[Action]) -> None:
        """Keep the timer of ``actions``; queue the rest for the iterating task."""
        for action in actions:
            if isinstance(action, SetTimer):
                self._timer_at = action.at
            else:
                self._pending.append(action)

    def _raise_or_take(self, actions: list[Action]) -> None:
        """A caller's input: raise its :class:`Fail` in the caller; take the rest."""
        failure = next((action.error for action in actions if isinstance(action, Fail)), None)
        if failure is not None:
            raise failure
        self._take(actions)

    async def _perform_for_caller(self, actions: list[Action]) -> None:
        """A caller's input: raise its :class:`Fail` in the caller; send its sends (a failed send is the
        core's to judge: the connection is down, and resume follows)."""
        self._raise_or_take([action for action in actions if not isinstance(action, Send)])
        async with self._send_lock:
            await self._send_locked([action for action in actions if isinstance(action, Send)])

    async def _send_locked(self, actions: list[Action]) -> TTSError | None:
        """Perform ``actions`` (the caller holds the send lock): each :class:`Send` while the connection
        is up, the rest taken. Returns the error a failed send fails its caller with, if any."""
        for action in actions:
            if not isinstance(action, Send):
                self._take([action])
                continue
            if not self._core.may_send(action):
                continue
            try:
                await self.transport.send(encode_client_message(action.message))
            except TTSError as error:
                outcome = self._core.send_failed(action, error)
                self._wake()
                failure = next((a.error for a in outcome if isinstance(a, Fail)), None)
                self._take([a for a in outcome if not isinstance(a, Fail)])
                if failure is not None:
                    return failure
        return None

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
            self._take(self._core.listening(self._now()))
            while True:
                gave = False
                while self._pending:
                    action = self._pending.popleft()
                    if isinstance(action, Deliver):
                        yield action.event
                        gave = True
                    elif isinstance(action, End):
                        return
                    else:
                        await self._perform(action)
                if self._core.done:
                    return
                if gave:
                    self._take(self._core.listening(self._now()))
                self._take(self._core.poll(self._now()))
                if not self._pending:
                    await self._next_input()
        finally:
            self._iterating = False

    async def _perform(self, action: Action) -> None:
        if isinstance(action, Fail):
            raise action.error
        if isinstance(action, Disconnect):
            await self._drop_receive()
            await self._close_transport()
        elif isinstance(action, Reconnect):
            await self._reconnect(action.delay_s)
        elif isinstance(action, Send):
            async with self._send_lock:
                failure = await self._send_locked([action])
            if failure is not None:
                raise failure

    async def _reconnect(self, delay_s: float) -> None:
        """Sleep ``delay_s``, connect, and hand the outcome to the core (whose re-sends go out here)."""
        await self.retry.sleep(delay_s)
        if self._core.closed:
            raise closed_error()
        try:
            await self._connect()
        except TTSError as error:
            await self._close_transport()
            self._take(self._core.resume_failed(error, self._now()))
            return
        async with self._send_lock:
            failure = await self._send_locked(self._core.connected(self._now()))
        if failure is not None:
            raise failure

    async def _next_input(self) -> None:
        """Wait for a frame, a wakeup (a new request, a cancel, finish, close) or the timer; hand what
        came to the core.

        One receive is kept pending across calls (never cancelled half-way), so a transport whose
        ``receive`` is not cancellation-safe loses nothing; :meth:`close` cancels it.
        """
        receiving: asyncio.Future[str | bytes] | None = None
        if self._core.up:
            if self._receiving is None:
                self._receiving = asyncio.ensure_future(self.transport.receive())
            receiving = self._receiving
        timeout = None if self._timer_at is None else max(self._timer_at - self._now(), 0.0)
        timer_at = self._timer_at
        done = await self._wakeup.wait(timeout, receiving)
        if not done:  # the loop waited the timer out (the core drops it if it moved meanwhile)
            if timer_at is not None:
                self._take(self._core.timer_due(timer_at, self._now()))
            return
        if receiving is None or receiving not in done:
            return  # a wakeup: poll re-reads the state
        if self._receiving is receiving:
            self._receiving = None
        if self._core.closed:
            if not receiving.cancelled():
                receiving.exception()  # retrieved, so asyncio does not log "never retrieved"
            return  # poll fails the iteration
        try:
            frame = receiving.result()
        except EOFError:
            self._take(self._core.receive_ended(self._now()))
        except TTSError as error:
            self._take(self._core.receive_failed(error, self._now()))
        else:
            self._take(self._core.frame_received(frame, self._now()))

    def _wake(self) -> None:
        """Wake the waiting iterator so it re-reads the state (a new request, a cancel, finish, close)."""
        self._wakeup.wake()

    async def _drop_receive(self) -> None:
        receiving, self._receiving = self._receiving, None
        await drop_receive(receiving)

    async def _close_transport(self) -> None:
        await close_quietly(self.transport)

    async def __aenter__(self) -> TTSSession:
        await self.open()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
