"""The scheduler's choices, with a fake engine (steps that record themselves) and a fake clock.

The clock only moves when a test moves it, and the single worker is held by a gate step while the others
queue, so each test's order is fully determined by the policy.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import numpy as np
import numpy.typing as npt
import pytest
from kokoro_endpoint.scheduling.admission import DEFAULT_MIN_BUFFER_S, AdmissionRule, Engaged
from kokoro_endpoint.scheduling.playback import Playback
from kokoro_endpoint.scheduling.scheduler import SegmentStream, SynthesisScheduler
from strands_voice_protocol.errors import ConfigurationError
from support.clocks import FakeTime

HANG_GUARD_S = 30.0


def test_playback_runs_out_at_real_time_speed_and_restarts_after_a_stall() -> None:
    time_ = FakeTime()
    playback = Playback(time_.clock)
    assert playback.deadline(since=3.0) == 3.0  # nothing heard yet: due when the request arrived
    time_.now = 10.0
    playback.add(2.0)
    assert playback.runs_out_at == 12.0
    time_.now = 11.0
    playback.add(1.5)  # queued behind what is still playing
    assert playback.runs_out_at == 13.5
    assert playback.buffered_s() == 2.5
    assert playback.deadline(since=10.0) == 13.5
    assert playback.deadline(since=20.0) == 20.0  # a later request in an idle session: due on arrival
    time_.now = 15.0  # ran out at 13.5: the next audio plays from now
    assert playback.buffered_s() == 0.0
    playback.add(1.0)
    assert playback.runs_out_at == 16.0
    assert playback.audio_s == 4.5


def _one_step(name: str, log: list[str], audio_s: float = 0.5) -> Iterator[float]:
    log.append(name)
    yield audio_s


def _held(gate: threading.Event, log: list[str]) -> Iterator[float]:
    gate.wait(HANG_GUARD_S)
    log.append("gate")
    yield 0.0


async def _until(predicate: Callable[[], bool]) -> None:
    """Wait (bounded) until ``predicate()`` holds."""
    async with asyncio.timeout(HANG_GUARD_S):
        for _ in itertools.count():
            if predicate():
                return
            await asyncio.sleep(0.005)


def _queued(scheduler: SynthesisScheduler, count: int) -> bool:
    return scheduler.counters().queued_steps == count


async def _run_in_order(scheduler: SynthesisScheduler, streams: list[SegmentStream[float]]) -> None:
    """Hold the worker, queue one step of each stream (in list order), then let the worker choose."""
    gate = threading.Event()
    log: list[str] = []
    held = scheduler.stream(_held(gate, log))
    holding = asyncio.create_task(held.next())
    await _until(lambda: scheduler.counters().running_steps == 1)
    steps = []
    for stream in streams:
        steps.append(asyncio.create_task(stream.next()))
        await _until(functools.partial(_queued, scheduler, len(steps)))
    gate.set()
    await asyncio.wait_for(asyncio.gather(holding, *steps), HANG_GUARD_S)
    held.close()


def _choose(policy: str, setup: list[tuple[str, float | None, float]]) -> list[str]:
    """The order in which one step of each listener runs.

    Args:
        policy: The scheduler's policy.
        setup: Per listener, in submission order: name, seconds of audio it got when its request arrived
            (None: none yet), and when its request arrived. The choice is made at t=10.
    """
    time_ = FakeTime()
    log: list[str] = []

    async def run() -> None:
        scheduler = SynthesisScheduler(1, policy, time_.clock)
        try:
            streams = []
            for name, heard_s, since in setup:
                playback = scheduler.playback()
                time_.now = since
                if heard_s is not None:
                    playback.add(heard_s)
                streams.append(scheduler.stream(_one_step(name, log), playback, float))
            time_.now = 10.0
            await _run_in_order(scheduler, streams)
            for stream in streams:
                stream.close()
        finally:
            scheduler.shutdown()

    asyncio.run(run())
    return log


# At t=10: "long" (5 s from t=1) ran out at 6, "short" (1 s from t=2) at 3; "new" just arrived.
THREE = [("long", 5.0, 1.0), ("short", 1.0, 2.0), ("new", None, 10.0)]


def test_deadline_runs_the_newcomer_first_then_whoever_ran_out_first() -> None:
    assert _choose("deadline", THREE) == ["new", "short", "long"]


def test_fifo_runs_steps_in_submission_order() -> None:
    assert _choose("fifo", THREE) == ["long", "short", "new"]


def test_deadline_runs_newcomers_in_arrival_order_before_listeners_still_playing() -> None:
    # "playing" got 4 s at t=8, so it runs out at 12; both newcomers go first, the earlier one first.
    order = _choose("deadline", [("later", None, 9.5), ("playing", 4.0, 8.0), ("sooner", None, 9.0)])
    assert order == ["sooner", "later", "playing"]


def test_deadline_runs_a_newcomers_first_step_before_a_stalled_listener() -> None:
    # "stalled" ran out at 3.5 and "long" at 7, both before the newcomer arrived (t=10): plain
    # earliest-deadline-first would make the newcomer wait behind both; its first window goes first.
    order = _choose("deadline", [("stalled", 0.5, 3.0), ("long", 5.0, 2.0), ("new", None, 10.0)])
    assert order == ["new", "stalled", "long"]


def test_deadline_ties_go_to_the_older_request_of_a_session() -> None:
    time_ = FakeTime()
    log: list[str] = []

    async def run() -> None:
        scheduler = SynthesisScheduler(1, "deadline", time_.clock)
        try:
            shared = scheduler.playback()
            time_.now = 10.0
            shared.add(2.0)
            first = scheduler.stream(_one_step("request-1", log), shared, float)
            second = scheduler.stream(_one_step("request-2", log), shared, float)
            # Queued in the opposite order: the session's older request still goes first.
            await _run_in_order(scheduler, [second, first])
            assert scheduler.counters().listeners == 1
            first.close()
            second.close()
            assert scheduler.counters().listeners == 0
        finally:
            scheduler.shutdown()

    asyncio.run(run())
    assert log == ["request-1", "request-2"]


def _pipelined(policy: str) -> list[str]:
    """Session A's two requests (sent together, nothing heard yet) and session B's one, queued A1 A2 B1."""
    time_ = FakeTime()
    log: list[str] = []

    async def run() -> None:
        scheduler = SynthesisScheduler(1, policy, time_.clock)
        try:
            time_.now = 10.0
            session_a = scheduler.playback()
            streams = [
                scheduler.stream(_one_step("A1", log), session_a, float),
                scheduler.stream(_one_step("A2", log), session_a, float),
                scheduler.stream(_one_step("B1", log), seconds=float),
            ]
            await _run_in_order(scheduler, streams)
            for stream in streams:
                stream.close()
        finally:
            scheduler.shutdown()

    asyncio.run(run())
    return log


def test_deadline_runs_a_request_synthesized_ahead_after_other_sessions_first_windows() -> None:
    # A2 is heard only after A1's audio: B's first window goes before it.
    assert _pipelined("deadline") == ["A1", "B1", "A2"]
    assert _pipelined("fifo") == ["A1", "A2", "B1"]


def test_a_step_feeds_its_listeners_playback_and_counts_lateness() -> None:
    time_ = FakeTime()

    async def run() -> None:
        scheduler = SynthesisScheduler(1, "deadline", time_.clock)
        try:
            playback = scheduler.playback()
            time_.now = 5.0
            stream = scheduler.stream(iter([0.75, 0.25]), playback, float)
            time_.now = 5.5  # the first step starts after the request came, but nothing was playing
            assert await stream.next() == 0.75
            assert playback.runs_out_at == 6.25
            time_.now = 7.0  # the listener ran out at 6.25: the next step starts late
            assert await stream.next() == 0.25
            assert await stream.next() is None
            counters = scheduler.counters()
            # Only the second step was late: the first had no audio playing to run out of.
            assert (counters.steps, counters.late_steps, counters.queued_steps) == (3, 1, 0)
            assert playback.audio_s == 1.0
        finally:
            scheduler.shutdown()

    asyncio.run(run())


def test_admission_refuses_a_listener_the_measured_load_cannot_feed() -> None:
    def slow() -> Iterator[float]:
        time.sleep(0.05)  # at least 50 ms of compute for 10 ms of audio: load >= 5
        yield 0.01
        yield 0.01

    async def run() -> None:
        time_ = FakeTime()
        scheduler = SynthesisScheduler(1, clock=time_.clock, admission=0.9, hold_s=1.0)
        unchecked = SynthesisScheduler(1, clock=time_.clock, admission=None)
        try:
            assert scheduler.refusal() is None  # no one to protect
            stream = scheduler.stream(slow(), scheduler.playback(session=True), seconds=float)
            assert await stream.next() == 0.01
            assert scheduler.counters().load >= 4.0
            assert scheduler.refusal() is not None
            assert scheduler.refusal(stream.playback) is None  # its own next sentence is no newcomer
            assert await stream.next() == 0.01
            assert await stream.next() is None  # its last step ran: the stream closed
            # Its audio still plays (and the hold after it): it is still engaged.
            assert scheduler.refusal() is not None
            time_.now = 0.02 + 1.0 - 0.001
            assert scheduler.refusal() is not None
            time_.now = 0.02 + 1.0 + 0.001
            assert scheduler.refusal() is None  # played out: refusing helps no one
            # An HTTP stream's listener: engaged only while streamed.
            again = scheduler.stream(slow(), seconds=float)
            assert await again.next() == 0.01
            assert scheduler.refusal() is not None
            again.close()
            assert scheduler.refusal() is None
            session = scheduler.playback(session=True)
            last = scheduler.stream(slow(), session, seconds=float)
            assert [await last.next() for _ in range(3)] == [0.01, 0.01, None]
            assert scheduler.refusal() is not None
            scheduler.forget(session)  # its session ended
            assert scheduler.refusal() is None
            other = unchecked.stream(slow(), seconds=float)
            assert await other.next() == 0.01
            assert unchecked.refusal() is None  # off
            other.close()
        finally:
            scheduler.shutdown()
            unchecked.shutdown()

    asyncio.run(run())


def test_a_calibrated_scheduler_refuses_before_any_step_ran() -> None:
    time_ = FakeTime()
    scheduler = SynthesisScheduler(1, clock=time_.clock, admission=0.8)
    try:
        scheduler.calibrate(0.35)  # the engine's measured rate: 0.8 / 0.35 -> two listeners fed
        first, second = scheduler.playback(), scheduler.playback()
        first.add(5.0)
        assert scheduler.counters().load == 0.35
        streams = [scheduler.stream(iter([1.0]), first)]
        assert scheduler.refusal() is None  # the second of two
        streams.append(scheduler.stream(iter([1.0]), second))
        second.add(5.0)
        assert scheduler.refusal() == "the engine feeds 2 listener(s) in real time here and 2 are listening"
        for stream in streams:
            stream.close()
    finally:
        scheduler.shutdown()


def test_a_listener_with_a_thin_buffer_is_not_made_to_wait_for_a_newcomer() -> None:
    time_ = FakeTime()
    scheduler = SynthesisScheduler(1, clock=time_.clock, admission=0.8)
    try:
        scheduler.calibrate(0.1)
        listener = scheduler.playback()
        stream = scheduler.stream(iter([1.0]), listener)
        assert scheduler.refusal() is not None  # its first audio is not made yet
        listener.add(DEFAULT_MIN_BUFFER_S)
        assert scheduler.refusal() is None
        time_.now = 0.1  # a tenth of a second played: less left than a newcomer's first step may take
        assert scheduler.refusal() is not None
        stream.close()
    finally:
        scheduler.shutdown()


def test_the_admission_rule() -> None:
    rule = AdmissionRule(0.8, workers=2, min_buffer_s=1.0)
    fed = Engaged(synthesizing=True, buffered_s=2.0)
    assert rule.listeners_fed(0.4) == 4
    assert rule.reason(0.4, [fed] * 3) is None
    assert rule.reason(0.4, [fed] * 4) is not None
    assert rule.reason(0.0, [fed] * 40) is None  # nothing measured: the rate says nothing
    assert rule.reason(0.4, []) is None
    assert rule.reason(0.4, [Engaged(True, 0.5)]) is not None
    assert rule.reason(0.4, [Engaged(False, 0.5)]) is None  # only playing: no step of it to delay
    assert AdmissionRule(None).reason(10.0, [fed] * 40) is None
    with pytest.raises(ConfigurationError):
        AdmissionRule(0.0)


def test_an_unknown_policy_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        SynthesisScheduler(1, "random")


class _SlowToneEngine:
    """A stand-in engine: each segment is 10 ms of tone made in at least 50 ms (load >= 5)."""

    name = "slow-tone"
    sample_rate = 24_000
    default_voice = "tone"
    voices = frozenset({"tone"})

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        tone = (0.3 * np.sin(np.arange(240, dtype=np.float32))).astype(np.float32)
        for _ in range(400):
            time.sleep(0.05)
            yield tone


def test_endpoint_refuses_a_new_listener_with_busy_when_admission_control_says_so() -> None:
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings
    from strands_voice_protocol.frames import (
        ErrorFrame,
        Synthesize,
        decode_server_control,
        encode_client_message,
    )
    from websockets.asyncio.client import connect

    settings = Settings(admission_max_load=0.9)
    with running_server(create_app(engine=_SlowToneEngine(), settings=settings)) as server:  # type: ignore[arg-type]
        state = server._server.config.app.state.endpoint

        async def run() -> None:
            async with connect(server.ws_url) as first:
                await first.send(encode_client_message(Synthesize(text="A long answer.")))
                await _until(lambda: state.scheduler.counters().load > 0.9)
                async with connect(server.ws_url) as second:
                    refused = decode_server_control(await asyncio.wait_for(second.recv(), HANG_GUARD_S))
                    assert isinstance(refused, ErrorFrame) and refused.code == "busy"
                    await asyncio.wait_for(second.wait_closed(), HANG_GUARD_S)
                    assert second.close_code == 1013
                async with httpx.AsyncClient(base_url=server.base_url) as client:
                    response = await client.post("/invocations", json={"text": "Hello."})
                    assert (response.status_code, response.json()["code"]) == (503, "busy")

        asyncio.run(run())


def test_shutdown_waits_for_the_running_step() -> None:
    # A worker still inside the engine when the interpreter exits aborts the process: shutdown waits.
    running = threading.Event()
    finished: list[bool] = []

    def one_slow_step() -> Iterator[float]:
        running.set()
        time.sleep(0.3)
        finished.append(True)
        yield 0.01

    async def run() -> None:
        scheduler = SynthesisScheduler(1)
        step = asyncio.ensure_future(scheduler.stream(one_slow_step()).next())
        await asyncio.to_thread(running.wait, 10)
        scheduler.shutdown()
        assert finished == [True]
        assert not any(thread.is_alive() for thread in scheduler._threads)
        await step

    asyncio.run(run())
