"""A fake Leg 1 endpoint and a step-by-step driver for the sans-I/O session core (no asyncio, no sockets).

The endpoint model answers in order, each request with its own deterministic pcm16 (bit-exact across runs,
like the int8 ONNX graph), from ``skip_samples`` on when it knows the field; it can answer ``busy`` or a
non-retryable error, honours ``cancel`` and ``close``. :class:`CoreRun` plays the driver: it performs the
core's actions against the model and records what a listener got, so property tests can drive random
interleavings of drops, ``busy``, cancels and timers and check the outcome.
"""

from __future__ import annotations

import itertools
import json
from array import array
from collections import deque
from dataclasses import dataclass, field

from strands_voice_protocol.errors import TTSConnectionError, TTSError
from strands_voice_protocol.frames import (
    Cancel,
    Close,
    ErrorFrame,
    SynthesisCancelled,
    SynthesisComplete,
    SynthesisStart,
    Synthesize,
    decode_client_message,
    encode_client_message,
    encode_server_message,
)

from strands_voice.retry import RetryPolicy
from strands_voice.session._actions import Action, Deliver, Disconnect, End, Fail, Reconnect, Send, SetTimer
from strands_voice.session._core import SessionCore
from strands_voice.session._requests import OwedRequest
from strands_voice.session.events import (
    AudioChunk,
    RequestCancelled,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
)

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


@dataclass
class CoreRun:
    """Drives a :class:`SessionCore` against a :class:`FakeEndpoint`, the way the asyncio driver does."""

    core: SessionCore
    endpoint: FakeEndpoint
    now: float = 0.0
    timer_at: float | None = None
    events: list[SessionEvent] = field(default_factory=list)
    failure: TTSError | None = None
    ended: bool = False
    reconnect_at: list[tuple[float, float | None]] = field(default_factory=list)  # (attempt, outage start)
    outage_from: float | None = None
    last_frame_at: float = -1.0
    cut_mid_audio: set[str] = field(default_factory=set)
    used_outcomes: list[TTSError | None] = field(default_factory=list)
    connect_plan: deque[TTSError | None] = field(
        default_factory=deque
    )  # the next attempts' outcomes (None: ok)

    @property
    def over(self) -> bool:
        return self.failure is not None or self.ended

    def apply(self, actions: list[Action]) -> None:
        """Perform ``actions`` (and what they lead to) until the core asks for nothing more."""
        queue = deque(actions)
        while queue and not self.over:
            action = queue.popleft()
            if isinstance(action, Deliver):
                self.events.append(action.event)
            elif isinstance(action, SetTimer):
                self.timer_at = action.at
            elif isinstance(action, Send):
                if self.core.may_send(action):
                    self.endpoint.receive(encode_client_message(action.message))
            elif isinstance(action, Disconnect):
                self.endpoint.drop()
            elif isinstance(action, Fail):
                self.failure = action.error
            elif isinstance(action, End):
                self.ended = True
            else:
                assert isinstance(action, Reconnect)
                queue.extend(self._reconnect(action.delay_s))

    def _reconnect(self, delay_s: float) -> list[Action]:
        self.now += delay_s
        self.reconnect_at.append((self.now, self.outage_from))
        error = self.connect_plan.popleft() if self.connect_plan else None
        self.used_outcomes.append(error)
        if error is not None:
            actions = self.core.resume_failed(error, self.now)
            if not error.retryable:
                assert actions == [Fail(error)], "a non-retryable connect error was retried"
            return actions
        self.endpoint.connect()
        return self.core.connected(self.now)

    def _track_outage(self) -> None:
        """An outage starts when the connection is down while something is owed (the retry budget's
        start); it ends when a request finishes."""
        if (
            self.outage_from is None
            and self.core.down is not None
            and (self.core.book.live() or self.core.finished)
        ):
            self.outage_from = self.now

    def settle(self) -> None:
        """What the driver does before it waits: poll until the core asks for nothing."""
        while not self.over:
            if self.core.done:
                self.ended = True
                return
            actions = self.core.poll(self.now)
            self._track_outage()
            if not [a for a in actions if not isinstance(a, SetTimer)]:
                self.apply(actions)
                return
            self.apply(actions)

    # ---- inputs --------------------------------------------------------------------------------------

    def open(self) -> None:
        self.endpoint.connect()
        self.apply(self.core.opened_ok(self.now))

    def submit(self, request_id: str, text: str) -> None:
        self.apply(self.core.submit(OwedRequest(request_id, text, None, None), self.now))
        self.apply(self.core.send_submitted(request_id))

    def cancel(self, request_id: str | None) -> None:
        self.apply(self.core.cancel(request_id))

    def finish(self) -> None:
        self.apply(self.core.finish())

    def frame(self) -> None:
        """The endpoint's next frame (or its normal end) arrives."""
        self.now += 0.01
        self.last_frame_at = self.now
        if self.endpoint.ended():
            actions = self.core.receive_ended(self.now)
        else:
            frame = self.endpoint.next_frame()
            if isinstance(frame, str) and json.loads(frame)["type"] == "synthesis_complete":
                self.outage_from = None  # something finished: the outage (if any) is over
            actions = self.core.frame_received(frame, self.now)
        self._track_outage()
        self.apply(actions)

    def drop(self) -> None:
        """The connection drops."""
        self.endpoint.drop()
        self.cut_mid_audio |= {
            r.request_id for r in self.core.book.owed.values() if r.delivered and not r.cancelled
        }
        actions = self.core.receive_failed(
            TTSConnectionError("connection_lost", "drop", retryable=True), self.now
        )
        self._track_outage()
        self.apply(actions)

    def timer(self) -> None:
        """The timer fires."""
        assert self.timer_at is not None
        self.now = max(self.now, self.timer_at)
        self.apply(self.core.timer_due(self.timer_at, self.now))

    # ---- what the listener got -----------------------------------------------------------------------

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
) -> CoreRun:
    """A core on a policy whose jitter draws come from ``draws`` (cycled), and an endpoint model."""
    cycle = itertools.cycle(draws)
    policy = RetryPolicy(deadline_s=deadline_s, random=lambda: next(cycle))
    core = SessionCore(retry=policy, silence_timeout=30.0, keepalive_s=keepalive_s)
    return CoreRun(core, FakeEndpoint(knows_skip=knows_skip))
