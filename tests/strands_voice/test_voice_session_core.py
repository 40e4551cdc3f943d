"""The sans-I/O session core, driven step by step against a fake endpoint model (no asyncio, no sockets).

Random interleavings of requests, frames, drops, ``busy``, refused requests, cancels, timers, failed
reconnects and finish, checked for what the session promises: no sample is delivered twice or
lost (a completed request's audio is exactly the endpoint's), each request ends once, a non-retryable
error is never retried, and no reconnect is tried past the retry deadline.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st
from session_model import REFUSED, CoreRun, new_run, speech
from strands_voice_protocol.errors import TTSConnectionError, TTSTimeoutError
from strands_voice_protocol.frames import Keepalive

from strands_voice.session._actions import Disconnect, Fail, Reconnect, Send, SetTimer
from strands_voice.session._requests import OwedRequest
from strands_voice.session.events import (
    AudioChunk,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
)

KINDS = (
    *["submit"] * 3,
    *["frame"] * 8,
    *["drop", "busy", "cancel", "timer", "finish", "close_eof"],
)

steps_strategy = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 7)), min_size=20, max_size=150)
connect_outcomes = st.lists(st.sampled_from(["ok", "ok", "retry", "retry", "refuse"]), max_size=12)


def play(run: CoreRun, steps: list[tuple[str, int]], texts: dict[str, str]) -> None:
    """Apply ``steps`` to ``run``, then finish and let the endpoint answer until the session is over."""
    run.open()
    for kind, n in steps:
        if run.over:
            return
        step(run, kind, n, texts)
        run.settle()
    if not run.core.finished and not run.over:
        run.finish()
        run.settle()
    for _ in range(100_000):
        if run.over:
            return
        if run.endpoint.has_frame() or run.endpoint.ended():
            run.frame()
        elif run.timer_at is not None:
            run.timer()
        run.settle()
    raise AssertionError("the session neither ended nor failed")


def step(run: CoreRun, kind: str, n: int, texts: dict[str, str]) -> None:
    """One input to the core."""
    if kind == "submit" and not run.core.finished:
        rid = f"r{len(texts)}"
        texts[rid] = "bad words" if n == 0 else f"text {rid} {n}"
        run.submit(rid, texts[rid])
    elif kind == "frame" and (run.endpoint.has_frame() or run.endpoint.ended()):
        run.frame()
    elif kind == "drop" and run.core.up:
        run.drop()
    elif kind == "busy":
        run.endpoint.busy_next = True
    elif kind == "cancel" and run.core.book.owed:
        owed = list(run.core.book.owed)
        run.cancel(None if n == 0 else owed[n % len(owed)])
    elif kind == "timer" and run.timer_at is not None and (not run.core.book.owed or n == 7):
        run.timer()  # mostly a keepalive; now and then the silence timeout while audio is owed
    elif kind == "finish" and not run.core.finished:
        run.finish()
    elif kind == "close_eof" and run.core.up and not run.endpoint.jobs and not run.endpoint.out:
        run.endpoint.closing = True  # the endpoint closes the session normally (an idle close)


def check(run: CoreRun, texts: dict[str, str], *, knows_skip: bool, deadline_s: float) -> None:
    """What every interleaving must keep."""
    for rid, text in texts.items():
        full = speech(text)
        ends = run.endings(rid)
        assert len(ends) <= 1, f"{rid} ended twice: {ends}"
        if run.ended:
            assert len(ends) == 1, f"{rid} never ended"
        heard = run.heard(rid)
        if ends and isinstance(ends[0], RequestCompleted):
            assert heard == full, f"{rid}: a sample delivered twice or lost"
            assert ends[0].audio_bytes == len(full)
        else:
            assert full.startswith(heard), f"{rid}: audio that is not the request's"
        if knows_skip:
            # Resumed at the sample: every chunk given is heard, with no restart and one start.
            assert not any(isinstance(e, RequestRestarted) for e in run.events)
            assert run.started(rid) <= 1
        if text.startswith("bad"):
            assert not any(isinstance(e, AudioChunk) and e.request_id == rid for e in run.events)
    # A refused request is never sent again.
    for wire_id in run.endpoint.refused:
        rid = wire_id.split("~")[0]
        later = run.endpoint.synthesized[run.endpoint.synthesized.index(wire_id) + 1 :]
        assert not [w for w in later if w.split("~")[0] == rid], f"{rid} retried after {REFUSED}"
        assert any(isinstance(e, RequestFailed) and e.code == REFUSED for e in run.endings(rid))
    # The deadline holds: no reconnect attempt starts past it, and giving up happens within it.
    for attempt_at, outage_from in run.reconnect_at:
        assert outage_from is not None
        assert attempt_at - outage_from <= deadline_s + 1e-9
    if run.core.failed is not None and run.outage_from is not None and run.now - run.outage_from > deadline_s:
        # Given up past the deadline only when the endpoint had answered since the last attempt (a busy
        # or a drop of a connection that came back): no waiting past it, no attempt past it.
        assert run.reconnect_at and run.last_frame_at > run.reconnect_at[-1][0]


@settings(
    max_examples=300
)  # a few ms each: enough runs that drops land mid-audio, refused reconnects, give-ups
@given(
    steps=steps_strategy,
    knows_skip=st.booleans(),
    deadline_s=st.sampled_from([0.0, 1.0, 20.0, 60.0, 60.0]),
    draws=st.lists(st.floats(0.0, 0.999), min_size=1, max_size=5),
    outcomes=connect_outcomes,
)
def test_session_core_random_interleavings_keep_every_sample_once_and_the_deadline(
    steps: list[tuple[str, int]], knows_skip: bool, deadline_s: float, draws: list[float], outcomes: list[str]
) -> None:
    run = new_run(knows_skip=knows_skip, deadline_s=deadline_s, draws=draws)
    for outcome in outcomes:
        if outcome == "retry":
            run.connect_plan.append(TTSConnectionError("connection_failed", "refused", retryable=True))
        elif outcome == "refuse":
            run.connect_plan.append(TTSConnectionError("connection_failed", "HTTP 403"))
        else:
            run.connect_plan.append(None)
    texts: dict[str, str] = {}
    play(run, steps, texts)
    check(run, texts, knows_skip=knows_skip, deadline_s=deadline_s)
    for label, seen in [
        ("a request resumed after a drop completed", run.core.reconnects and run.completed_after_resume()),
        ("a reconnect was refused", any(e is not None and not e.retryable for e in outcomes_seen(run))),
        ("the session gave up", run.core.failed is not None),
        ("the session ended normally", run.ended),
    ]:
        if seen:
            event(label)


def outcomes_seen(run: CoreRun) -> list[Any]:
    """The connect outcomes the run used."""
    return run.used_outcomes


def _running(**options: Any) -> CoreRun:
    run = new_run(knows_skip=True, deadline_s=20.0, draws=[0.5], **options)
    run.open()
    return run


def test_session_core_a_cut_request_resumes_at_the_sample_where_delivery_stopped() -> None:
    run = _running()
    run.submit("r0", "text r0 1")
    for _ in range(3):  # start and two pieces of audio
        run.frame()
    given_bytes = len(run.heard("r0"))
    run.drop()
    assert run.core.reconnects == 1
    resent = run.endpoint.jobs[0]
    assert resent.wire_id == "r0~1" and resent.skip == given_bytes // 2 - 120  # 5 ms of overlap asked again
    while not run.endings("r0"):
        run.frame()
    assert run.heard("r0") == speech("text r0 1") and run.started("r0") == 1


def test_session_core_an_older_endpoint_replays_whole_after_a_restart_event() -> None:
    run = new_run(knows_skip=False, deadline_s=20.0, draws=[0.5])
    run.open()
    run.submit("r0", "text r0 1")
    run.frame()
    run.frame()
    partial = len(run.heard("r0"))
    run.drop()
    while not run.endings("r0"):
        run.frame()
    restarts = [e for e in run.events if isinstance(e, RequestRestarted)]
    assert restarts == [RequestRestarted("r0", partial)]
    assert run.heard("r0") == speech("text r0 1") and run.started("r0") == 2


def test_session_core_a_non_retryable_loss_fails_without_a_reconnect() -> None:
    run = _running()
    run.submit("r0", "text r0 1")
    refused = TTSConnectionError("connection_lost", "close 1008")
    actions = run.core.receive_failed(refused, run.now)
    assert actions == [Fail(refused)]


def test_session_core_busy_resumes_after_the_policy_delay() -> None:
    run = _running()
    run.submit("r0", "text r0 1")
    run.endpoint.busy_next = True
    frame = run.endpoint.next_frame()
    actions = run.core.frame_received(frame, 1.0)
    assert [type(a) for a in actions if not isinstance(a, SetTimer)] == [Disconnect, Reconnect]
    reconnect = next(a for a in actions if isinstance(a, Reconnect))
    assert reconnect.delay_s == 0.25 * 0.75  # the first delay, half of it jittered by the injected 0.5


def test_session_core_gives_up_when_the_deadline_leaves_no_attempt() -> None:
    run = new_run(knows_skip=True, deadline_s=1.0, draws=[0.999])
    run.open()
    run.submit("r0", "text r0 1")
    run.connect_plan.extend(
        TTSConnectionError("connection_failed", "down", retryable=True) for _ in range(20)
    )
    run.drop()
    assert isinstance(run.failure, TTSConnectionError) and run.failure.request_id == "r0"
    assert (
        all(at <= 1.0 for at, _ in run.reconnect_at) and len(run.reconnect_at) == 2
    )  # 0.25 s, 0.5 s; 1 s more would pass 1 s
    # A session that gave up takes no more requests: the input's answer is its failure.
    assert run.core.submit(OwedRequest("r1", "text r1 1", None, None), run.now) == [Fail(run.failure)]
    assert run.core.cancel(None) == [Fail(run.failure)]


def test_session_core_keepalive_while_idle_and_silence_timeout_while_owed() -> None:
    run = _running(keepalive_s=5.0)
    assert run.timer_at == 5.0
    assert run.core.timer_due(4.0, 5.0) == []  # a timer that is no longer the one set is stale
    assert run.core.timer_due(5.0, 5.0) == [Send(Keepalive()), SetTimer(10.0)]
    run.now = 6.0
    run.submit("r0", "text r0 1")
    assert run.timer_at == 36.0  # silence_timeout from when audio became owed
    actions = run.core.timer_due(36.0, 35.999)  # due at 36 s, even on a clock a hair behind
    assert len(actions) == 1 and isinstance(actions[0], Fail)
    assert isinstance(actions[0].error, TTSTimeoutError) and actions[0].error.request_id == "r0"


def test_session_core_started_event_comes_once_per_request() -> None:
    run = _running()
    run.submit("r0", "text r0 1")
    run.frame()
    assert run.events == [RequestStarted("r0", "pcm16", 24_000, 1)]
