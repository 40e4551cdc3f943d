"""A fake Leg 1 endpoint, and the real :class:`~strands_voice.session.TTSSession` driven against it step
by step on virtual time (no sockets, no waiting).

The endpoint model answers in order, each request with its own deterministic pcm16 (bit-exact across runs,
like the int8 ONNX graph), from ``skip_samples`` on when it knows the field; it can answer ``busy`` or a
non-retryable error, honours ``cancel`` and ``close``. :class:`SessionRun` runs a ``TTSSession`` over a
transport to that model on a :class:`~virtual_time.VirtualTimeLoop`: each input (a request, a frame, a drop,
a cancel, a timer) is given, then the session's tasks settle, and what its one consumer got is recorded,
so property tests can drive random interleavings of drops, ``busy``, cancels and timers and check the
outcome.
"""

from __future__ import annotations

import asyncio
import itertools
from array import array
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from strands_voice_protocol.errors import TTSConnectionError, TTSError
from strands_voice_protocol.frames import (
    Cancel,
    ClientMessage,
    Close,
    ErrorFrame,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    decode_client_message,
    encode_server_message,
)

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
)
from strands_voice.session._retry import RetryPolicy
from strands_voice.transports._base import Frame
from support.clocks import VirtualTimeLoop, settle

#: The code the model answers texts starting with "bad" with: not retryable.
REFUSED = "invalid_request"


def speech(text: str) -> bytes:
    """The pcm16 the model speaks ``text`` as: the same samples every run (a bit-exact engine)."""
    seed = sum(map(ord, text))
    length = 40 + (seed * 37) % 400
    samples = array("h", (((seed * 131 + i * 7919) % 20_001) - 10_000 for i in range(length)))
    return samples.tobytes()


@dataclass
class _Job:
    wire_id: str
    text: str
    skip: int | None  # samples, as the request named them
    cancelled: bool = False
    started: bool = False
    sent: int = 0  # bytes of audio sent


@dataclass
class FakeEndpoint:
    """One endpoint: a connection at a time, answers strictly in order.

    Args:
        knows_skip: False models an older endpoint: it answers from sample 0 and echoes no ``skip_samples``.
        chunk_bytes: The audio frame sizes it cycles through (even: whole samples).
    """

    knows_skip: bool = True
    chunk_bytes: tuple[int, ...] = (64, 200, 32)
    jobs: deque[_Job] = field(default_factory=deque)
    out: deque[str | bytes] = field(default_factory=deque)  # frames ready to go, before the jobs' next
    closing: bool = False
    connected: bool = False
    synthesized: list[str] = field(default_factory=list)  # every wire id ever received
    busy_next: bool = False  # answer the next job's turn with `busy`
    refused: list[str] = field(default_factory=list)  # wire ids answered with a non-retryable error
    received: list[ClientMessage] = field(default_factory=list)  # every client message, in order
    _chunk: int = 0

    def connect(self) -> None:
        self.jobs.clear()
        self.out.clear()
        self.closing = False
        self.connected = True

    def drop(self) -> None:
        self.connected = False
        self.jobs.clear()
        self.out.clear()

    def receive(self, text: str) -> None:
        """A client message on the current connection."""
        assert self.connected, "sent on a connection that is down"
        message = decode_client_message(text)
        self.received.append(message)
        if self.closing:
            return  # an endpoint closing the session (an idle close) reads nothing more
        if isinstance(message, Synthesize):
            assert message.request_id is not None
            self.synthesized.append(message.request_id)
            self.jobs.append(_Job(message.request_id, message.text, message.skip_samples))
        elif isinstance(message, Cancel):
            for job in self.jobs:
                if message.request_id is None or job.wire_id == message.request_id:
                    job.cancelled = True
        elif isinstance(message, Close):
            self.closing = True

    def has_frame(self) -> bool:
        return self.connected and bool(self.out or self.jobs)

    def ended(self) -> bool:
        """Closed after the last answer: the next receive is a normal end (EOF)."""
        return self.connected and self.closing and not self.out and not self.jobs

    def next_frame(self) -> str | bytes:
        """The next frame the endpoint sends."""
        if self.out:
            return self.out.popleft()
        job = self.jobs[0]
        if job.cancelled:
            self.jobs.popleft()
            return encode_server_message(SynthesisCancelled(job.wire_id))
        if not job.started:
            if self.busy_next:
                self.busy_next = False
                self.jobs.popleft()
                return encode_server_message(ErrorFrame("busy", "at capacity", job.wire_id))
            if job.text.startswith("bad"):
                self.jobs.popleft()
                self.refused.append(job.wire_id)
                return encode_server_message(ErrorFrame(REFUSED, "refused", job.wire_id))
            job.started = True
            echo = job.skip if self.knows_skip else None  # echoed when named, 0 included (PROTOCOL v1.1)
            return encode_server_message(SynthesisStart(job.wire_id, skip_samples=echo))
        audio = speech(job.text)[((job.skip or 0) * 2 if self.knows_skip else 0) :]
        if job.sent < len(audio):
            size = self.chunk_bytes[self._chunk % len(self.chunk_bytes)]
            self._chunk += 1
            piece = audio[job.sent : job.sent + size]
            job.sent += len(piece)
            return piece
        self.jobs.popleft()
        return encode_server_message(SynthesisComplete(job.wire_id, job.sent, job.sent / 48_000, 0.01))


#: A connect attempt's planned outcome: None connects; an error is raised by the transport's ``connect``.
ConnectOutcome = TTSError | None


class ModelTransport:
    """A :class:`~strands_voice.transports.FrameTransport` to the endpoint model: the test hands over each
    frame (:meth:`hand_over`) and cuts the connection (:meth:`cut`); the session does the rest."""

    def __init__(self, run: SessionRun) -> None:
        self.run = run
        self.connected = False
        self._receiving: asyncio.Future[Frame] | None = None

    @property
    def receiving(self) -> bool:
        """Whether the session waits for a frame."""
        return self._receiving is not None and not self._receiving.done()

    async def connect(self) -> None:
        self.run.connecting()
        self.run.endpoint.connect()
        self.connected = True

    async def send(self, message: str) -> None:
        if not self.connected:
            raise TTSConnectionError("connection_lost", "not connected", retryable=True)
        self.run.endpoint.receive(message)

    async def receive(self) -> Frame:
        if not self.connected:
            raise TTSConnectionError("connection_lost", "not connected", retryable=True)
        self._receiving = asyncio.get_running_loop().create_future()
        return await self._receiving

    async def close(self) -> None:
        if self.connected:
            self.connected = False
            self.run.endpoint.drop()
            self.run.went_down()

    def hand_over(self, frame: Frame | BaseException) -> None:
        """The endpoint's next frame (or an error: ``EOFError`` is its normal end) reaches the session."""
        assert self._receiving is not None and not self._receiving.done(), "nobody is receiving"
        if isinstance(frame, BaseException):
            self._receiving.set_exception(frame)
        else:
            self._receiving.set_result(frame)

    def cut(self, error: TTSError) -> None:
        """The connection drops: the pending receive fails with ``error``."""
        self.connected = False
        self.run.endpoint.drop()
        self.run.went_down()
        self.hand_over(error)


class SessionRun:
    """A :class:`TTSSession` over a :class:`ModelTransport`, its one consumer, and what it got.

    Every input is a coroutine method that gives the input, then lets the session settle; run them with
    :meth:`play` on the run's own :class:`~virtual_time.VirtualTimeLoop`.
    """

    def __init__(
        self, endpoint: FakeEndpoint, policy: Callable[[SessionRun], RetryPolicy], keepalive_s: float | None
    ) -> None:
        self.loop = VirtualTimeLoop()
        self.endpoint = endpoint
        self.transport = ModelTransport(self)
        self.session = TTSSession(
            self.transport, silence_timeout=30.0, retry=policy(self), keepalive_s=keepalive_s
        )
        self.events: list[SessionEvent] = []
        self.failure: TTSError | None = None
        self.ended = False
        self.finished = False
        self.cancelled: set[str] = set()
        self.reconnect_at: list[tuple[float, float | None]] = []  # (attempt, outage start)
        self.outage_from: float | None = None
        self.last_frame_at = -1.0
        self.cut_mid_audio: set[str] = set()
        self.used_outcomes: list[ConnectOutcome] = []
        self.connect_plan: deque[ConnectOutcome] = deque()  # the reconnects' outcomes (None: ok)
        self._opened = False  # the first connect is the session's open
        self._refused_at: TTSError | None = None
        self._consumer: asyncio.Task[None] | None = None

    @property
    def now(self) -> float:
        return self.loop.now

    @property
    def over(self) -> bool:
        return self.failure is not None or self.ended

    @property
    def gave_up(self) -> bool:
        """The session stopped trying to reconnect (the retry budget, or retries off)."""
        return isinstance(self.failure, TTSConnectionError) and self.failure.message.startswith(
            "speech stopped"
        )

    def play(self, scenario: Callable[[], Awaitable[None]]) -> None:
        """Run ``scenario`` (the run's inputs), then close the session; re-raise what its tasks raised."""

        async def main() -> None:
            try:
                await scenario()
            finally:
                await self.session.close()
                if self._consumer is not None:
                    self._consumer.cancel()
                    (outcome,) = await asyncio.gather(self._consumer, return_exceptions=True)
                    if isinstance(outcome, Exception):
                        raise outcome  # a bug in the session (its own failures are recorded, not raised)

        try:
            self.loop.run_until_complete(main())
        finally:
            self.loop.close()

    # ---- what the transport reports ------------------------------------------------------------------

    def connecting(self) -> None:
        """A connect attempt: the first one (open) succeeds; each reconnect takes the plan's next outcome."""
        if not self._opened:
            self._opened = True
            return
        assert self._refused_at is None, f"a non-retryable connect error was retried: {self._refused_at}"
        self.reconnect_at.append((self.now, self.outage_from))
        error = self.connect_plan.popleft() if self.connect_plan else None
        self.used_outcomes.append(error)
        if error is not None:
            if not error.retryable:
                self._refused_at = error
            raise error

    def went_down(self) -> None:
        """The connection closed or dropped: an outage starts if something is owed (the retry budget's
        start); it ends when a request finishes."""
        if self.outage_from is None and (self._live() or self.finished) and not self.over:
            self.outage_from = self.now

    def _live(self) -> list[str]:
        return [rid for rid in self.session.owed if rid not in self.cancelled]

    def _outage_if_down(self) -> None:
        """A request (or finish) while the connection is down starts the outage now."""
        if not self.transport.connected and self.outage_from is None and not self.over:
            self.outage_from = self.now

    # ---- inputs --------------------------------------------------------------------------------------

    async def open(self) -> None:
        await self.session.open()
        self._consumer = asyncio.create_task(self._consume())
        await settle()

    async def _consume(self) -> None:
        try:
            async for event in self.session:
                self.events.append(event)
            self.ended = True
        except TTSError as error:
            self.failure = self.failure or error

    async def _give(self, call: Awaitable[Any]) -> None:
        """Give one input; an error it raises in its caller is the session's failure."""
        try:
            await call
        except TTSError as error:
            self.failure = self.failure or error
        await settle()

    async def submit(self, request_id: str, text: str) -> None:
        self._outage_if_down()
        await self._give(self.session.synthesize(text, request_id=request_id))

    async def cancel(self, request_id: str | None) -> None:
        self.cancelled |= set(self.session.owed) if request_id is None else {request_id}
        await self._give(self.session.cancel(request_id))

    async def finish(self) -> None:
        self.finished = True
        self._outage_if_down()
        await self._give(self.session.finish())

    async def frame(self) -> None:
        """The endpoint's next frame (or its normal end) arrives."""
        self.loop.now += 0.01
        self.last_frame_at = self.now
        if self.endpoint.ended():
            self.transport.hand_over(EOFError())
        else:
            frame = self.endpoint.next_frame()
            if isinstance(frame, str) and '"synthesis_complete"' in frame:
                self.outage_from = None  # something finished: the outage (if any) is over
            self.transport.hand_over(frame)
        await settle()

    async def drop(self, error: TTSError | None = None) -> None:
        """The connection drops (a retryable ``connection_lost`` unless ``error`` says otherwise)."""
        ended = {e.request_id for e in self.events if isinstance(e, RequestCompleted | RequestCancelled)}
        self.cut_mid_audio |= {
            e.request_id
            for e in self.events
            if isinstance(e, AudioChunk) and e.request_id not in ended | self.cancelled
        }
        self.transport.cut(error or TTSConnectionError("connection_lost", "drop", retryable=True))
        await settle()

    async def timer(self) -> None:
        """Time moves on to the session's next timer, which fires."""
        due = self.loop.next_timer()
        assert due is not None, "no timer is set"
        self.loop.now = max(self.now, due)
        await settle()

    # ---- what the consumer got -----------------------------------------------------------------------

    def heard(self, request_id: str) -> bytes:
        """The audio a player that honours :class:`RequestRestarted` (drops the partial) kept."""
        audio = bytearray()
        for event in self.events:
            if isinstance(event, RequestRestarted) and event.request_id == request_id:
                audio.clear()
            elif isinstance(event, AudioChunk) and event.request_id == request_id:
                audio += event.data
        return bytes(audio)

    def endings(self, request_id: str) -> list[SessionEvent]:
        ends = (RequestCompleted, RequestCancelled, RequestFailed)
        return [e for e in self.events if isinstance(e, ends) and e.request_id == request_id]

    def completed_after_resume(self) -> bool:
        """True when some request was cut mid-audio and completed on a later connection."""
        return any(
            isinstance(e, RequestCompleted) and e.request_id in self.cut_mid_audio for e in self.events
        )

    def started(self, request_id: str) -> int:
        return sum(isinstance(e, RequestStarted) and e.request_id == request_id for e in self.events)


def new_run(
    *, knows_skip: bool, deadline_s: float, draws: list[float], keepalive_s: float | None = 5.0
) -> SessionRun:
    """A session on a policy whose jitter draws come from ``draws`` (cycled) and whose clock and sleep are
    the run's virtual time, over a transport to a new endpoint model."""
    cycle = itertools.cycle(draws)

    def policy(run: SessionRun) -> RetryPolicy:
        async def sleep(seconds: float) -> None:
            run.loop.now += seconds
            await asyncio.sleep(0)

        return RetryPolicy(
            deadline_s=deadline_s, random=lambda: next(cycle), clock=lambda: run.loop.now, sleep=sleep
        )

    return SessionRun(FakeEndpoint(knows_skip=knows_skip), policy, keepalive_s)
