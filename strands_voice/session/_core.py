"""The TTS session's rules as a sans-I/O state machine: events in, actions out.

No asyncio, no transport and no clock reads: every input that depends on time carries ``now`` (seconds
on the driver's clock, the retry policy's ``clock``). The inputs are what happened (connected, a frame
received, the connection lost, a timer due, a request submitted, a cancel, finish, close); each returns
the :mod:`~strands_voice.session._actions` the driver performs (send a frame, reconnect after a delay,
deliver an event, fail, set the timer). Everything a session decides is decided here, so it is tested by
feeding inputs, without sockets or wall time:

- **resume**: a lost connection (a drop, a normal close while audio is owed, ``busy``) reconnects after
  the :class:`~strands_voice.session.RetryPolicy`'s backoff and re-sends every unfinished request in order;
  a request cut mid-audio resumes with ``skip_samples`` (no sample given twice or lost), or is
  replayed whole against an endpoint that does not echo it;
- **give up**: when the policy's deadline leaves no attempt, the error that started the outage fails the
  session, once; a non-retryable error is never retried;
- **timers**: the silence timeout while audio is owed; a keepalive while nothing is owed.
"""

from __future__ import annotations

import logging

from strands_voice_protocol.errors import (
    TransportErrorCode,
    TTSConnectionError,
    TTSError,
    TTSTimeoutError,
)
from strands_voice_protocol.frames import Cancel, ClientMessage, Close, Keepalive, Synthesize

from strands_voice.session._actions import Action, Deliver, Disconnect, End, Fail, Reconnect, Send, SetTimer
from strands_voice.session._events import RequestCancelled
from strands_voice.session._frames import read_frame
from strands_voice.session._requests import OwedRequest, RequestBook
from strands_voice.session._retry import Backoff, RetryPolicy, is_retryable
from strands_voice.session._state import (
    DOWN_STATES,
    FINISHING_STATES,
    NEW_STATES,
    UP_STATES,
    Input,
    State,
    next_state,
)

logger = logging.getLogger(__name__)


def closed_error() -> TTSConnectionError:
    """The error of anything done on a session after :meth:`SessionCore.close`."""
    return TTSConnectionError("connection_lost", "the TTS session is closed")


class SessionCore:
    """One Leg 1 session's state: the owed requests, the connection's state, the retry budget, the timers.

    Args:
        retry: When to resume and retry; its ``random`` draws the jitter (inject it for determinism).
        silence_timeout: Seconds the endpoint may stay silent while a request's audio is owed.
        keepalive_s: Seconds between ``keepalive`` messages while nothing is owed; None sends none.
    """

    def __init__(self, *, retry: RetryPolicy, silence_timeout: float, keepalive_s: float | None) -> None:
        self.retry = retry
        self.silence_timeout = silence_timeout
        self.keepalive_s = keepalive_s
        self.book = RequestBook()
        self.backoff = Backoff(retry)
        self.state = State.NEW
        self.down: TTSError | None = None  # why the connection is down (in an outage)
        self.failed: TTSError | None = None  # why resume gave up (in State.FAILED)
        self.reconnects = 0
        self._silence_from = 0.0
        self._keepalive_from = 0.0
        self._timer: float | None = None  # the timer last announced with SetTimer

    # ---- state -------------------------------------------------------------------------------------

    def _move(self, event: Input) -> None:
        """Take the transition of ``event`` (:data:`~strands_voice.session._state.TRANSITIONS`)."""
        before, self.state = self.state, next_state(self.state, event)
        if self.state is not before:
            logger.debug(
                "from=<%s>, to=<%s>, input=<%s> | session state", before.value, self.state.value, event.value
            )

    @property
    def opened(self) -> bool:
        """True once the first connection was up."""
        return self.state not in NEW_STATES

    @property
    def finished(self) -> bool:
        """True once no more requests are taken (finish, or close)."""
        return self.state in FINISHING_STATES

    @property
    def closed(self) -> bool:
        """True once the caller closed the session."""
        return self.state is State.CLOSED

    @property
    def up(self) -> bool:
        """True while the connection is up (open, not closed, no outage)."""
        return self.state in UP_STATES

    @property
    def done(self) -> bool:
        """True once finished and nothing is owed: iteration ends."""
        return self.finished and not self.book.owed

    def _refusal(self, *, allow_finished: bool = False) -> list[Action]:
        """A :class:`Fail` saying why nothing may be sent now (after give-up, before open, after close or
        finish), or nothing when it may."""
        if self.failed is not None:
            return [Fail(self.failed)]
        if not self.opened or self.closed:
            return [Fail(TTSConnectionError("connection_lost", "the TTS session is not open"))]
        if self.finished and not allow_finished:
            return [Fail(TTSConnectionError("connection_lost", "the TTS session takes no more requests"))]
        return []

    def may_send(self, send: Send) -> bool:
        """Whether ``send``, asked for earlier, still goes out now: not once the connection went down
        meanwhile (resume then sends what is still needed)."""
        del send  # every message alike
        return self.up

    def timer_at(self) -> float | None:
        """When :meth:`timer_due` should next be called (None: no timer runs)."""
        if not self.up:
            return None
        if self.book.owed:
            return self._silence_from + self.silence_timeout
        if self.keepalive_s is not None and not self.finished:
            return self._keepalive_from + self.keepalive_s
        return None

    def _with_timer(self, actions: list[Action]) -> list[Action]:
        """``actions``, then a :class:`SetTimer` when the timer moved since it was last announced."""
        at = self.timer_at()
        if at != self._timer:
            self._timer = at
            actions.append(SetTimer(at))
        return actions

    # ---- opening -----------------------------------------------------------------------------------

    def open_failed(self, error: TTSError, now: float) -> list[Action]:
        """The first connection failed: ``busy`` is retried under the policy; anything else fails fast
        (nothing is owed yet, so a wrong address is reported at once)."""
        delay = self.backoff.next_delay(error, now) if error.code == "busy" else None
        if delay is None or self.closed:
            return [Fail(error)]
        logger.debug("code=<%s>, delay_s=<%.2f> | endpoint busy at open; retrying", error.code, delay)
        return [Reconnect(delay)]

    def opened_ok(self, now: float) -> list[Action]:
        """The first connection is up."""
        self.backoff.reset()
        self._move(Input.OPENED)
        self._silence_from = self._keepalive_from = now
        return self._with_timer([])

    # ---- the caller's inputs -----------------------------------------------------------------------

    def submit(self, request: OwedRequest, now: float) -> list[Action]:
        """Owe an answer for ``request`` (from before it is sent: the answer may come before the send
        returns); :meth:`send_submitted` sends it. A :class:`Fail` when no request may be sent now."""
        refusal = self._refusal()
        if refusal:
            return refusal
        if not self.book.owed:
            self._silence_from = now  # the silence clock starts when audio becomes owed
        self.book.add(request)
        return self._with_timer([])

    def send_submitted(self, request_id: str) -> list[Action]:
        """The ``synthesize`` of a submitted request, if the connection is up (else resume sends it)."""
        request = self.book.owed.get(request_id)
        if request is None or not self.up or request.generation == self.book.generation:
            return []
        return [Send(self.book.send(request), on_error="drop")]

    def cancel(self, request_id: str | None) -> list[Action]:
        """Cancel one request, or every owed one (None): the ``cancel`` to send while the connection is up
        (nothing when the one request named was never on the wire: it ends locally)."""
        refusal = self._refusal(allow_finished=True)
        if refusal:
            return refusal
        targets = [request_id] if request_id is not None else list(self.book.owed)
        wire_id: str | None = None
        for rid in targets:
            request = self.book.owed.get(rid)
            if request is not None:
                request.cancelled = True
                wire_id = request.wire_id
        if request_id is not None and wire_id is None:
            return []
        return self.control(Cancel(request_id=wire_id if request_id is not None else None))

    def finish(self) -> list[Action]:
        """No more requests: the ``close`` to send, when there is a connection to tell."""
        tell = self.opened and not self.finished
        self._move(Input.FINISH)
        return self.control(Close()) if tell else []

    def control(self, message: ClientMessage) -> list[Action]:
        """Send a control message now if the connection is up (a resume sends what is still needed)."""
        return [Send(message)] if self.up else []

    def close(self) -> list[Action]:
        """The caller closed the session: owed audio is abandoned."""
        self._move(Input.CLOSE)
        return self._with_timer([])

    # ---- the connection's inputs -------------------------------------------------------------------

    def listening(self, now: float) -> list[Action]:
        """The consumer is back for the next event. The silence clock runs only while someone listens:
        a reader that was away (a slow consumer, whose backpressure also pauses the endpoint) must not
        find the endpoint "silent" on return."""
        self._silence_from = max(self._silence_from, now)
        return self._with_timer([])

    def poll(self, now: float) -> list[Action]:
        """Before waiting for input: what the state asks for now (end, fail, or resume an outage)."""
        if self.closed:
            return [Fail(closed_error())]
        if self.failed is not None:
            return [Fail(self.failed)]
        if self.done:
            return [End()]
        if self.state in DOWN_STATES and self.down is not None and (self.book.owed or self.finished):
            if not is_retryable(self.down):
                return [Fail(self.down)]
            return self.lost(self.down, now)
        return self._with_timer([])

    def frame_received(self, frame: str | bytes, now: float) -> list[Action]:
        """A frame from the endpoint: the events it makes (and a resume when it answered ``busy``)."""
        self._silence_from = self._keepalive_from = now
        answer = read_frame(self.book, frame, retry_busy=self.retry.enabled)
        if answer.finished:
            self.backoff.reset()  # something finished: any outage is over
        actions: list[Action] = [Deliver(event) for event in answer.events]
        if answer.busy is not None:
            # Every request before it has ended (answers come in order): resume from it on a new
            # connection, after a backoff (a `close` may already have gone out on this one).
            busy = TTSConnectionError(
                "busy", "the TTS endpoint is busy", answer.busy.request_id, retryable=True
            )
            actions += self.lost(busy, now)
        return self._with_timer(actions)

    def receive_ended(self, now: float) -> list[Action]:
        """The endpoint closed the session normally."""
        if self.done or (self.finished and not self.book.live()):
            # Only cancelled requests were owed: the endpoint closed without answering them; they end here.
            ends: list[Action] = [Deliver(RequestCancelled(rid)) for rid in self.book.owed]
            self.book.clear()
            return [*ends, End()]
        # A normal close while the session is still in use (idle timeout, a server going away): resumed
        # like a drop, at once if audio is owed, else when the next request comes.
        live = self.book.live()
        cause = TTSConnectionError(
            "connection_lost",
            "the TTS endpoint closed the session",
            live[0] if live else None,
            retryable=True,
        )
        return self.lost(cause, now)

    def receive_failed(self, error: TTSError, now: float) -> list[Action]:
        """Receiving failed: a retryable error is an outage to resume; any other fails the session."""
        if self.closed or not is_retryable(error):
            return [Fail(error)]
        return self.lost(error, now)

    def send_failed(self, send: Send, error: TTSError) -> list[Action]:
        """A :class:`Send` failed: see :data:`~strands_voice.session._actions.SendFailure`."""
        if not is_retryable(error) and send.on_error != "down":
            if send.on_error == "drop" and isinstance(send.message, Synthesize):
                request = self.book.by_wire.get(send.message.request_id or "")
                if request is not None:
                    self.book.forget(request)
            return [Fail(error)]
        logger.debug("code=<%s> | message not sent: connection down", error.code)
        self._mark_down(error)
        return self._with_timer([])

    def timer_due(self, at: float, now: float) -> list[Action]:
        """The timer set for ``at`` fired: the endpoint went silent while audio is owed, or a keepalive is
        due. A timer that is no longer the one announced (moved since) is stale: nothing happens."""
        if at != self._timer:
            return []
        now = max(now, at)  # due, even on a clock that has not quite reached it
        if not self.up:
            return self._with_timer([])
        if self.book.owed:
            if now >= self._silence_from + self.silence_timeout:
                rid = next(iter(self.book.owed))
                error = TTSTimeoutError(
                    "silence_timeout", f"the TTS endpoint sent nothing for {self.silence_timeout} s", rid
                )
                return [Fail(error)]
        elif (
            self.keepalive_s is not None
            and not self.finished
            and now >= self._keepalive_from + self.keepalive_s
        ):
            self._keepalive_from = now
            logger.debug("keepalive sent")
            return self._with_timer([Send(Keepalive())])
        return self._with_timer([])

    # ---- resume ------------------------------------------------------------------------------------

    def lost(self, cause: TTSError, now: float) -> list[Action]:
        """The connection is lost: close it, cut the answers under way, and reconnect after a backoff
        (or not yet, when nothing is owed: the next request reconnects)."""
        self._mark_down(cause)
        actions: list[Action] = [Disconnect()]
        actions += [Deliver(RequestCancelled(rid)) for rid in self.book.cut()]
        if self.done or (not self.book.live() and not self.finished):
            return self._with_timer(actions)
        actions.append(self._retry_or_give_up(cause, now))
        return self._with_timer(actions)

    def resume_failed(self, error: TTSError, now: float) -> list[Action]:
        """A reconnect attempt failed: another after a backoff, unless the error is not retryable."""
        if self.closed:
            return [Fail(closed_error())]
        if not is_retryable(error):
            return [Fail(error)]
        return [self._retry_or_give_up(error, now)]

    def connected(self, now: float) -> list[Action]:
        """A reconnect attempt succeeded: re-send, in order, every owed request (then ``close``)."""
        if self.closed:
            return [Disconnect(), Fail(closed_error())]
        self.reconnects += 1
        self.book.generation += 1
        self.down = None
        self._move(Input.CONNECTED)
        self._silence_from = self._keepalive_from = now
        actions: list[Action] = [Deliver(RequestCancelled(rid)) for rid in self.book.end_cancelled_unsent()]
        actions += [Send(self.book.send(request), on_error="raise") for request in self.book.unsent()]
        if self.finished:
            actions.append(Send(Close(), on_error="raise"))
        logger.debug("reconnects=<%d>, resent=<%d> | session resumed", self.reconnects, len(self.book.owed))
        return self._with_timer(actions)

    def _retry_or_give_up(self, cause: TTSError, now: float) -> Action:
        delay = self.backoff.next_delay(cause, now)
        if delay is None:
            return Fail(self._gave_up())
        logger.debug("code=<%s>, delay_s=<%.2f> | reconnecting", cause.code, delay)
        return Reconnect(delay)

    def _gave_up(self) -> TTSError:
        cause = self.backoff.cause or self.down
        code: TransportErrorCode = (
            cause.code if isinstance(cause, TTSConnectionError | TTSTimeoutError) else "connection_lost"
        )
        live = self.book.live()
        message = (
            f"speech stopped: the TTS endpoint could not be reached again within {self.retry.deadline_s:g} s"
            if self.retry.enabled
            else "speech stopped: the connection to the TTS endpoint was lost"
        )
        logger.debug("code=<%s>, owed=<%d> | giving up", code, len(live))
        self.failed = TTSConnectionError(code, message, live[0] if live else None)
        self._move(Input.GIVE_UP)
        return self.failed

    def _mark_down(self, error: TTSError) -> None:
        if self.down is None:
            logger.debug("code=<%s> | connection down", error.code)
            self.down = error
        self._move(Input.LOST)
