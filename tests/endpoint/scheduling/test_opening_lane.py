"""A new request's first step runs at once, pausing another listener's running step.

From the bottom up: :meth:`Interrupt.pause` and :meth:`Interrupt.resume`; the scheduler's opening lane,
with a stand-in engine whose model call blocks until the test releases it (bounded by a guard), so the
order of events is decided by what happened, not by timing; and the real ONNX engine, whose paused
decoder call runs again and gives exactly the audio of a run that was never paused.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from kokoro_endpoint.scheduling.interrupt import Interrupt, SynthesisInterrupted
from kokoro_endpoint.scheduling.scheduler import SynthesisScheduler
from support.endpoint import HeldSession, until_one_step_is_queued

pytestmark = pytest.mark.timeout(120)

GUARD_S = 30.0


def test_pause_stops_the_watched_call_and_holds_later_ones_until_resume() -> None:
    interrupt = Interrupt()
    stops: list[str] = []
    with interrupt.watching(lambda: stops.append("running")):
        interrupt.pause()
        interrupt.pause()  # idempotent
    assert stops == ["running"] and interrupt.pauses == 1 and not interrupt.is_set
    entered = threading.Event()

    def next_call() -> None:
        with interrupt.watching(lambda: stops.append("next")):
            entered.set()

    caller = threading.Thread(target=next_call)
    caller.start()
    assert not entered.wait(0.2)  # held while paused (a bounded check of a negative, not a timing)
    interrupt.resume()
    caller.join(GUARD_S)
    assert entered.is_set() and stops == ["running"] and interrupt.paused_s > 0


def test_a_cancel_releases_a_paused_request() -> None:
    interrupt = Interrupt()
    interrupt.pause()
    outcome: list[str] = []

    def call() -> None:
        with interrupt.watching(lambda: outcome.append("stopped on entry")):
            outcome.append("entered")

    caller = threading.Thread(target=call)
    caller.start()
    interrupt.set()
    caller.join(GUARD_S)
    assert outcome == ["stopped on entry", "entered"] and interrupt.is_set
    with pytest.raises(SynthesisInterrupted):
        interrupt.check()


class _Listener:
    """A stand-in request: its first step at once, its second a model call that blocks until ``release``.

    Like the ONNX engine, a call stopped by a pause runs again once resumed; ``events`` records each.
    """

    def __init__(self, name: str, events: list[str]) -> None:
        self.name = name
        self.events = events
        self.interrupt = Interrupt()
        self.entered = threading.Event()
        self.release = threading.Event()

    def steps(self) -> Iterator[str]:
        yield f"{self.name}1"
        while True:
            stopped = threading.Event()
            with self.interrupt.watching(stopped.set):
                pauses = self.interrupt.pauses
                self.events.append(f"{self.name} call")
                self.entered.set()
                deadline = time.monotonic() + GUARD_S
                while not (stopped.is_set() or self.release.is_set()) and time.monotonic() < deadline:
                    stopped.wait(0.005)
                if self.interrupt.is_set:
                    raise SynthesisInterrupted("the request was cancelled")
                if self.interrupt.pauses == pauses:
                    break
                self.events.append(f"{self.name} paused")
        self.events.append(f"{self.name} done")
        yield f"{self.name}2"


def _newcomer(events: list[str]) -> Iterator[str]:
    events.append("newcomer ran")
    yield "newcomer1"


def _wait_for(event: threading.Event) -> None:
    assert event.wait(GUARD_S), "the step never started"


def test_a_newcomers_first_step_runs_while_the_running_step_is_paused() -> None:
    async def run() -> None:
        scheduler = SynthesisScheduler(1)
        events: list[str] = []
        listener = _Listener("a", events)
        try:
            stream = scheduler.stream(listener.steps(), seconds=lambda _: 5.0, interrupt=listener.interrupt)
            assert await stream.next() == "a1"  # the listener has 5 s of audio to hear
            second = asyncio.create_task(stream.next())
            await asyncio.to_thread(_wait_for, listener.entered)
            newcomer = scheduler.stream(_newcomer(events))
            # Its first step completes while the listener's call is still held (only `release` ends it).
            assert await asyncio.wait_for(newcomer.next(), GUARD_S) == "newcomer1"
            assert not second.done()
            listener.release.set()
            assert await asyncio.wait_for(second, GUARD_S) == "a2"
            assert [event for event in events if event.startswith("a ")] == [
                "a call",
                "a paused",
                "a call",
                "a done",
            ]
            # The call ran again only after the newcomer's step: it was paused, not running beside it.
            assert events.index("newcomer ran") < len(events) - 1 - events[::-1].index("a call")
            assert listener.interrupt.pauses == 1
            assert scheduler.counters().running_steps == 0
        finally:
            listener.release.set()
            scheduler.shutdown()

    asyncio.run(run())


@pytest.mark.parametrize(
    ("opening_lane", "policy"), [(False, "deadline"), (True, "fifo")], ids=["lane off", "fifo"]
)
def test_without_the_lane_the_newcomer_waits_for_the_running_step(opening_lane: bool, policy: str) -> None:
    async def run() -> None:
        scheduler = SynthesisScheduler(1, policy=policy, opening_lane=opening_lane)
        events: list[str] = []
        listener = _Listener("a", events)
        try:
            stream = scheduler.stream(listener.steps(), seconds=lambda _: 5.0, interrupt=listener.interrupt)
            assert await stream.next() == "a1"
            second = asyncio.create_task(stream.next())
            await asyncio.to_thread(_wait_for, listener.entered)
            newcomer = asyncio.create_task(scheduler.stream(_newcomer(events)).next())
            await until_one_step_is_queued(scheduler, GUARD_S)
            assert events == ["a call"] and not newcomer.done()
            listener.release.set()
            assert await asyncio.wait_for(newcomer, GUARD_S) == "newcomer1"
            assert await asyncio.wait_for(second, GUARD_S) == "a2"
            assert events == ["a call", "a done", "newcomer ran"] and listener.interrupt.pauses == 0
        finally:
            listener.release.set()
            scheduler.shutdown()

    asyncio.run(run())


def test_a_newcomer_does_not_pause_another_newcomers_first_step() -> None:
    async def run() -> None:
        scheduler = SynthesisScheduler(1)
        events: list[str] = []
        first = _Listener("a", events)
        try:

            def first_steps() -> Iterator[str]:  # its very first step is the held call
                steps = first.steps()
                next(steps)
                yield from steps

            opening = asyncio.create_task(scheduler.stream(first_steps(), interrupt=first.interrupt).next())
            await asyncio.to_thread(_wait_for, first.entered)
            newcomer = asyncio.create_task(scheduler.stream(_newcomer(events)).next())
            await until_one_step_is_queued(scheduler, GUARD_S)
            assert first.interrupt.pauses == 0 and not newcomer.done()
            first.release.set()
            assert await asyncio.wait_for(opening, GUARD_S) == "a2"
            assert await asyncio.wait_for(newcomer, GUARD_S) == "newcomer1"
            assert events == ["a call", "a done", "newcomer ran"]
        finally:
            first.release.set()
            scheduler.shutdown()

    asyncio.run(run())


def test_a_paused_onnx_decoder_call_runs_again_and_gives_the_same_audio(onnx_engine: Any) -> None:
    split = onnx_engine._split
    assert split is not None and onnx_engine.plan is not None, "the engine decodes in windows (split graph)"
    text = "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the lamp."
    voice = onnx_engine.default_voice
    expected = [piece.audio for piece in onnx_engine.stream(text, voice, 1.0, interrupt=Interrupt())]
    decoder = HeldSession(split.decoder, GUARD_S)
    interrupt = Interrupt()
    split.decoder = decoder
    try:
        pieces = onnx_engine.stream(text, voice, 1.0, interrupt=interrupt)
        got = [next(pieces).audio]  # the first window: decoder call 1
        rest: list[Any] = []
        worker = threading.Thread(target=lambda: rest.extend(piece.audio for piece in pieces))
        worker.start()
        assert decoder.entered.wait(GUARD_S)  # decoder call 2 is under way, its options watched
        interrupt.pause()  # as the opening lane does
        decoder.release.set()  # onnxruntime runs with terminate set: the call stops
        interrupt.resume()
        worker.join(GUARD_S)
        assert not worker.is_alive()
        assert interrupt.pauses == 1 and decoder.calls == len(expected) + 1  # call 2 ran twice
        got += rest
        assert len(got) == len(expected)
        for piece, reference in zip(got, expected, strict=True):
            np.testing.assert_array_equal(piece, reference)
    finally:
        split.decoder = decoder._session


def test_the_lane_is_on_by_default_and_the_setting_and_flag_turn_it_off(onnx_engine: Any) -> None:
    from kokoro_endpoint.cli import build_parser, settings_from_args
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.settings import Settings
    from starlette.testclient import TestClient

    assert settings_from_args(build_parser().parse_args([])).opening_lane is True
    assert settings_from_args(build_parser().parse_args(["--no-opening-lane"])).opening_lane is False
    for settings, lane in (
        (Settings(), True),
        (Settings(opening_lane=False), False),
        (Settings(scheduling="fifo"), False),
    ):
        app = create_app(engine=onnx_engine, settings=settings)
        with TestClient(app):  # the scheduler starts with the app
            assert (app.state.endpoint.scheduler._lane is not None) is lane, settings
