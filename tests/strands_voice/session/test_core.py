"""The TTS session driven step by step against a fake endpoint model, on virtual time (no sockets).

Random interleavings of requests, frames, drops, ``busy``, refused requests, cancels, timers, failed
reconnects and finish, given to the real :class:`~strands_voice.session.TTSSession` (its sans-I/O core and
its asyncio driver together), checked for what the session promises: no sample is delivered twice or
lost (a completed request's audio is exactly the endpoint's), each request ends once, a non-retryable
error is never retried, and no reconnect is tried past the retry deadline. The core's own rules for stale
timers are checked on the core itself.
"""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st
from strands_voice_protocol.errors import TTSConnectionError, TTSTimeoutError
from strands_voice_protocol.frames import Keepalive
from support.session_model import REFUSED, SessionRun, new_run, speech

from strands_voice.session._actions import Fail, Send, SetTimer
from strands_voice.session._core import SessionCore
from strands_voice.session._events import (
    AudioChunk,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
)
from strands_voice.session._requests import OwedRequest
from strands_voice.session._retry import RetryPolicy

KINDS = (
    *["submit"] * 3,
    *["frame"] * 8,
    *["drop", "busy", "cancel", "timer", "finish", "close_eof"],
)

steps_strategy = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 7)), min_size=20, max_size=150)
connect_outcomes = st.lists(st.sampled_from(["ok", "ok", "retry", "retry", "refuse"]), max_size=12)


async def play(run: SessionRun, steps: list[tuple[str, int]], texts: dict[str, str]) -> None:
    """Apply ``steps`` to ``run``, then finish and let the endpoint answer until the session is over."""
    await run.open()
    for kind, n in steps:
        if run.over:
            return
        await step(run, kind, n, texts)
    if not run.finished and not run.over:
        await run.finish()
    for _ in range(100_000):
        if run.over:
            return
        if run.transport.receiving and (run.endpoint.has_frame() or run.endpoint.ended()):
            await run.frame()
        elif run.loop.next_timer() is not None:
            await run.timer()
        else:
            raise AssertionError("the session waits for nothing the endpoint will send")
    raise AssertionError("the session neither ended nor failed")


async def step(run: SessionRun, kind: str, n: int, texts: dict[str, str]) -> None:
    """One input to the session."""
    receiving = run.transport.receiving
    if kind == "submit" and not run.finished:
        rid = f"r{len(texts)}"
        texts[rid] = "bad words" if n == 0 else f"text {rid} {n}"
        await run.submit(rid, texts[rid])
    elif kind == "frame" and receiving and (run.endpoint.has_frame() or run.endpoint.ended()):
        await run.frame()
    elif kind == "drop" and receiving:
        await run.drop()
    elif kind == "busy":
        run.endpoint.busy_next = True
    elif kind == "cancel" and run.session.owed:
        owed = run.session.owed
        await run.cancel(None if n == 0 else owed[n % len(owed)])
    elif kind == "timer" and run.loop.next_timer() is not None and (not run.session.owed or n == 7):
        await run.timer()  # mostly a keepalive; now and then the silence timeout while audio is owed
    elif kind == "finish" and not run.finished:
        await run.finish()
    elif kind == "close_eof" and receiving and not run.endpoint.jobs and not run.endpoint.out:
        run.endpoint.closing = True  # the endpoint closes the session normally (an idle close)


def check(run: SessionRun, texts: dict[str, str], *, knows_skip: bool, deadline_s: float) -> None:
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
    if run.gave_up and run.outage_from is not None and run.now - run.outage_from > deadline_s:
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
    run.play(lambda: play(run, steps, texts))
    check(run, texts, knows_skip=knows_skip, deadline_s=deadline_s)
    for label, seen in [
        ("a request resumed after a drop completed", run.session.reconnects and run.completed_after_resume()),
        ("a reconnect was refused", any(e is not None and not e.retryable for e in run.used_outcomes)),
        ("the session gave up", run.gave_up),
        ("the session ended normally", run.ended),
    ]:
        if seen:
            event(label)


async def _running(run: SessionRun) -> SessionRun:
    await run.open()
    return run


def _new() -> SessionRun:
    return new_run(knows_skip=True, deadline_s=20.0, draws=[0.5])


def test_session_a_cut_request_resumes_at_the_sample_where_delivery_stopped() -> None:
    run = _new()

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        for _ in range(3):  # start and two pieces of audio
            await run.frame()
        given_bytes = len(run.heard("r0"))
        await run.drop()
        assert run.session.reconnects == 1
        resent = run.endpoint.jobs[0]
        assert resent.wire_id == "r0~1" and resent.skip == given_bytes // 2 - 120  # 5 ms of overlap again
        while not run.endings("r0"):
            await run.frame()

    run.play(scenario)
    assert run.heard("r0") == speech("text r0 1") and run.started("r0") == 1


def test_session_an_older_endpoint_replays_whole_after_a_restart_event() -> None:
    run = new_run(knows_skip=False, deadline_s=20.0, draws=[0.5])
    partial: list[int] = []

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        await run.frame()
        await run.frame()
        partial.append(len(run.heard("r0")))
        await run.drop()
        while not run.endings("r0"):
            await run.frame()

    run.play(scenario)
    restarts = [e for e in run.events if isinstance(e, RequestRestarted)]
    assert restarts == [RequestRestarted("r0", partial[0])]
    assert run.heard("r0") == speech("text r0 1") and run.started("r0") == 2


def test_session_a_non_retryable_loss_fails_without_a_reconnect() -> None:
    run = _new()
    refused = TTSConnectionError("connection_lost", "close 1008")

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        await run.drop(refused)

    run.play(scenario)
    assert run.failure is refused and run.reconnect_at == []


def test_session_busy_resumes_after_the_policy_delay() -> None:
    run = _new()

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        run.endpoint.busy_next = True
        await run.frame()

    run.play(scenario)
    busy_at = run.last_frame_at
    # The first delay, half of it jittered by the injected 0.5; then the request is sent again.
    assert run.reconnect_at == [(busy_at + 0.25 * 0.75, busy_at)]
    assert run.endpoint.synthesized == ["r0", "r0~1"] and run.session.reconnects == 1


def test_session_gives_up_when_the_deadline_leaves_no_attempt() -> None:
    run = new_run(knows_skip=True, deadline_s=1.0, draws=[0.999])
    after: list[BaseException] = []

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        run.connect_plan.extend(
            TTSConnectionError("connection_failed", "down", retryable=True) for _ in range(20)
        )
        await run.drop()
        # A session that gave up takes no more requests: the input's answer is its failure.
        for call in (run.session.synthesize("text r1 1", request_id="r1"), run.session.cancel(None)):
            try:
                await call
            except TTSConnectionError as error:
                after.append(error)

    run.play(scenario)
    assert isinstance(run.failure, TTSConnectionError) and run.failure.request_id == "r0" and run.gave_up
    assert (
        all(at <= 1.0 for at, _ in run.reconnect_at) and len(run.reconnect_at) == 2
    )  # 0.25 s, 0.5 s; 1 s more would pass 1 s
    assert after == [run.failure, run.failure]


def test_session_keepalive_while_idle_and_silence_timeout_while_owed() -> None:
    run = _new()

    async def scenario() -> None:
        await _running(run)
        assert run.loop.next_timer() == 5.0
        await run.timer()
        assert run.endpoint.received == [Keepalive()] and run.loop.next_timer() == 10.0
        run.loop.now = 6.0
        await run.submit("r0", "text r0 1")
        assert run.loop.next_timer() == 36.0  # silence_timeout from when audio became owed
        await run.timer()

    run.play(scenario)
    assert isinstance(run.failure, TTSTimeoutError) and run.failure.request_id == "r0"


def test_session_core_drops_a_stale_timer_and_fires_one_a_hair_early() -> None:
    core = SessionCore(retry=RetryPolicy(), silence_timeout=30.0, keepalive_s=5.0)
    assert core.opened_ok(0.0) == [SetTimer(5.0)]
    assert core.timer_due(4.0, 5.0) == []  # a timer that is no longer the one set is stale
    assert core.timer_due(5.0, 5.0) == [Send(Keepalive()), SetTimer(10.0)]
    core.submit(OwedRequest("r0", "text r0 1", None, None), 6.0)
    core.send_submitted("r0")
    actions = core.timer_due(36.0, 35.999)  # due at 36 s, even on a clock a hair behind
    assert len(actions) == 1 and isinstance(actions[0], Fail)
    assert isinstance(actions[0].error, TTSTimeoutError) and actions[0].error.request_id == "r0"


def test_session_started_event_comes_once_per_request() -> None:
    run = _new()

    async def scenario() -> None:
        await _running(run)
        await run.submit("r0", "text r0 1")
        await run.frame()

    run.play(scenario)
    assert run.events == [RequestStarted("r0", "pcm16", 24_000, 1)]
