"""A cancelled request's running step is interrupted, so the listener's next request does not wait for it.

From the bottom up: the :class:`Interrupt` signal; the scheduler setting it when a stream is closed mid-step
(and ``next()`` answering None, not an error, to the task waiting on it); the ONNX engine stopping a real
onnxruntime call through ``RunOptions.terminate``; and a WebSocket session whose cancel frees the engine for
the next request. The stand-in engine's step blocks until it is interrupted (bounded by a guard), so every
test's outcome is decided by what happened, not by how long it took.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from kokoro_endpoint.engines.interface import InterruptibleEngine, speech_pieces
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.scheduling.interrupt import Interrupt, SynthesisInterrupted
from kokoro_endpoint.scheduling.scheduler import SegmentStream, SynthesisScheduler
from support.endpoint import HeldSession, until_one_step_is_queued

pytestmark = pytest.mark.timeout(120)

HANG_GUARD_S = 30.0


def test_interrupt_stops_the_watched_call_once_and_later_calls_at_once() -> None:
    interrupt = Interrupt()
    stops: list[str] = []
    with interrupt.watching(lambda: stops.append("first")):
        assert not interrupt.is_set
        interrupt.set()
        interrupt.set()  # idempotent
    assert stops == ["first"]
    with pytest.raises(SynthesisInterrupted):
        interrupt.check()
    with interrupt.watching(lambda: stops.append("second")):  # already set: stopped on entry
        pass
    assert stops == ["first", "second"]


def test_a_call_that_ended_is_not_stopped_later() -> None:
    interrupt = Interrupt()
    stops: list[str] = []
    with interrupt.watching(lambda: stops.append("ended")):
        pass
    interrupt.set()
    assert stops == []


class BlockingEngine:
    """A stand-in interruptible engine: a text's first piece at once, its second only when interrupted.

    ``interrupted`` records every text whose blocked step ended because of the interrupt (not the guard).
    """

    name = "blocking"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})
    interruptible = True

    def __init__(self) -> None:
        self.interrupted: list[str] = []
        self.blocked = threading.Event()

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        return (piece.audio for piece in self.stream(text, voice, speed))

    def stream(
        self, text: str, voice: str, speed: float, interrupt: Interrupt | None = None
    ) -> Iterator[SpeechPiece]:
        tone = (0.3 * np.sin(np.arange(2_400, dtype=np.float32))).astype(np.float32)
        yield SpeechPiece(tone, text.startswith("Short"))
        if text.startswith("Short"):
            return
        stopped = threading.Event()
        assert interrupt is not None, "the endpoint hands every request's interrupt to the engine"
        self.blocked.set()
        with interrupt.watching(stopped.set):
            if not stopped.wait(HANG_GUARD_S):
                yield SpeechPiece(tone, True)  # only after the guard: the test then fails on `interrupted`
                return
        self.interrupted.append(text)
        raise SynthesisInterrupted("the request was cancelled")


def test_the_blocking_engine_is_an_interruptible_engine() -> None:
    assert isinstance(BlockingEngine(), InterruptibleEngine)


def test_speech_pieces_hands_the_interrupt_only_to_an_interruptible_engine() -> None:
    engine = BlockingEngine()
    interrupt = Interrupt()
    pieces = speech_pieces(engine, "Long answer.", "v", 1.0, interrupt=interrupt)
    next(pieces)
    threading.Timer(0.0, lambda: (engine.blocked.wait(HANG_GUARD_S), interrupt.set())).start()
    with pytest.raises(SynthesisInterrupted):
        next(pieces)
    assert engine.interrupted == ["Long answer."]


async def _blocked_in_its_second_step(
    scheduler: SynthesisScheduler, engine: BlockingEngine, text: str
) -> tuple[SegmentStream[SpeechPiece], asyncio.Task[SpeechPiece | None]]:
    """A stream of ``engine.stream(text)`` with its interrupt, whose second step is running (blocked), and
    the task waiting for that step."""
    interrupt = Interrupt()
    stream = scheduler.stream(engine.stream(text, "v", 1.0, interrupt), interrupt=interrupt)
    assert await stream.next() is not None
    waiting = asyncio.create_task(stream.next())
    await asyncio.to_thread(engine.blocked.wait, HANG_GUARD_S)
    return stream, waiting


def test_closing_a_stream_mid_step_interrupts_it_and_its_waiter_gets_none() -> None:
    async def run() -> None:
        scheduler = SynthesisScheduler(1)
        engine = BlockingEngine()
        try:
            stream, waiting = await _blocked_in_its_second_step(scheduler, engine, "Long answer.")
            stream.close()  # what a cancel does, from another task
            assert await asyncio.wait_for(waiting, HANG_GUARD_S) is None
            assert engine.interrupted == ["Long answer."]
            # The worker is free again: another request's step runs.
            other = scheduler.stream(engine.stream("Short one.", "v", 1.0))
            assert await asyncio.wait_for(other.next(), HANG_GUARD_S) is not None
        finally:
            scheduler.shutdown()

    asyncio.run(run())


def test_closing_a_stream_whose_step_is_queued_drops_it_and_its_waiter_gets_none() -> None:
    async def run() -> None:
        # Without the opening lane, a new request's first step queues behind the running one.
        scheduler = SynthesisScheduler(1, opening_lane=False)
        engine = BlockingEngine()
        try:
            holder, holding = await _blocked_in_its_second_step(scheduler, engine, "Long holder.")
            made: list[str] = []

            def never() -> Iterator[int]:
                made.append("ran")
                yield 1

            queued = scheduler.stream(never())
            waiting = asyncio.create_task(queued.next())
            await until_one_step_is_queued(scheduler, HANG_GUARD_S)
            queued.close()
            assert await asyncio.wait_for(waiting, HANG_GUARD_S) is None
            holder.close()
            assert await asyncio.wait_for(holding, HANG_GUARD_S) is None
            assert made == []
        finally:
            scheduler.shutdown()

    asyncio.run(run())


def test_the_onnx_engine_stops_its_running_decoder_call(onnx_engine: Any) -> None:
    split = onnx_engine._split
    assert split is not None and onnx_engine.plan is not None, "the engine decodes in windows (split graph)"
    assert isinstance(onnx_engine, InterruptibleEngine)
    decoder = HeldSession(split.decoder, HANG_GUARD_S)
    interrupt = Interrupt()
    split.decoder = decoder
    outcome: list[BaseException | SpeechPiece] = []
    try:
        pieces = onnx_engine.stream(
            "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the lamp.",
            onnx_engine.default_voice,
            1.0,
            interrupt=interrupt,
        )
        first = next(pieces)  # the first window: decoder call 1
        assert first.audio.size and not first.segment_end

        def second_window() -> None:
            try:
                outcome.append(next(pieces))
            except BaseException as error:  # the test asserts what it was
                outcome.append(error)

        worker = threading.Thread(target=second_window)
        worker.start()
        assert decoder.entered.wait(HANG_GUARD_S)  # decoder call 2 is under way, its options watched
        interrupt.set()  # from this thread, as the scheduler does on a cancel
        decoder.release.set()
        worker.join(HANG_GUARD_S)
        assert len(outcome) == 1 and isinstance(outcome[0], SynthesisInterrupted), outcome
        # The session is not harmed: the same engine speaks the next request whole.
        voice = onnx_engine.default_voice
        again = list(onnx_engine.stream("Hello there.", voice, 1.0, interrupt=Interrupt()))
        assert sum(piece.audio.size for piece in again) > 0
    finally:
        split.decoder = decoder._session


def test_a_cancel_frees_the_engine_for_the_sessions_next_request() -> None:
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings
    from strands_voice_protocol.frames import Cancel, Synthesize, encode_client_message
    from support.leg1_client import collect
    from websockets.asyncio.client import connect

    engine = BlockingEngine()
    settings = Settings(admission_max_load=None)  # no start-up measurement: this engine blocks on purpose
    with running_server(create_app(engine=engine, settings=settings)) as server:  # type: ignore[arg-type]

        async def run() -> None:
            async with connect(server.ws_url) as ws:
                await ws.send(encode_client_message(Synthesize(text="Long answer.", request_id="long")))
                await asyncio.to_thread(engine.blocked.wait, HANG_GUARD_S)  # its second step is running
                await ws.send(encode_client_message(Cancel(request_id="long")))
                await ws.send(encode_client_message(Synthesize(text="Short one.", request_id="short")))
                frames = await collect(ws, terminals=2, limit_s=HANG_GUARD_S / 2)
                ends = [(f.control["type"], f.control["request_id"]) for f in frames if f.control]
                assert ("synthesis_cancelled", "long") in ends
                assert ("synthesis_complete", "short") in ends

        asyncio.run(run())
    assert engine.interrupted == ["Long answer."]
