"""RecordingEngine: the engine as the endpoint sees it in a trial, timed to each request's first segment."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
from strands_voice_tools.bench.engine_probe import RecordingEngine, engine_first_segment_ms


class SlowEngine:
    """Each word is one segment; the first costs ``first_s``, each later one ``rest_s``."""

    name = "slow"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})

    def __init__(self, first_s: float, rest_s: float = 0.0) -> None:
        self.first_s = first_s
        self.rest_s = rest_s
        self.warmed = 0
        self.closed: list[str] = []
        self.segments_made = 0

    def warm_up(self) -> None:
        self.warmed += 1

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        try:
            for index, _word in enumerate(text.split()):
                time.sleep(self.first_s if index == 0 else self.rest_s)
                self.segments_made += 1
                yield np.zeros(10, dtype=np.float32)
        finally:
            self.closed.append(text)


def test_timed_engine_delegates_and_records_each_first_segment() -> None:
    engine = SlowEngine(first_s=0.05, rest_s=0.1)
    timed = RecordingEngine(engine)
    assert (timed.name, timed.sample_rate, timed.default_voice, timed.voices) == (
        "slow",
        24_000,
        "v",
        frozenset({"v"}),
    )
    timed.warm_up()
    assert engine.warmed == 1

    before = time.perf_counter()
    segments = list(timed.synthesize("one two three", "v", 1.0))
    whole_call_s = time.perf_counter() - before
    assert len(segments) == 3
    (call,) = timed.calls
    assert call.text == "one two three"
    assert before <= call.started < call.finished <= time.perf_counter()
    # The first segment's work only, not the rest: the two later segments took at least rest_s each.
    assert 0.05 <= call.first_segment_s <= whole_call_s - 2 * engine.rest_s
    assert engine.closed == ["one two three"]


def test_timed_engine_closes_the_inner_generator_when_the_endpoint_stops_early() -> None:
    engine = SlowEngine(first_s=0.0)
    timed = RecordingEngine(engine)
    segments = timed.synthesize("a b c d", "v", 1.0)
    next(segments)
    segments.close()  # a cancel: the endpoint closes the stream after one segment
    assert engine.closed == ["a b c d"]
    assert engine.segments_made == 1
    assert list(timed.synthesize("", "v", 1.0)) == []  # nothing to speak: nothing recorded
    assert [call.text for call in timed.calls] == ["a b c d"]


def test_timed_engine_records_from_worker_threads_in_order_of_readiness() -> None:
    timed = RecordingEngine(SlowEngine(first_s=0.0))
    texts = [f"text {index}" for index in range(8)]

    def drain(text: str) -> None:
        for _segment in timed.synthesize(text, "v", 1.0):
            pass

    threads = [threading.Thread(target=drain, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    calls = timed.calls
    assert sorted(call.text for call in calls) == sorted(texts)
    finished = [call.finished for call in calls]
    assert finished == sorted(finished)


def test_engine_first_segment_ms_times_only_the_first_segment() -> None:
    engine = SlowEngine(first_s=0.02)
    timings = engine_first_segment_ms(engine, "one two three four", voice="v", trials=3, warmups=1)
    assert len(timings) == 3
    assert all(ms >= 20.0 for ms in timings)  # the first segment's sleep
    assert engine.segments_made == 4  # one segment per run: the generator was closed after it


def test_timed_engine_streams_pieces_and_times_the_first() -> None:
    """An engine without ``stream``: each segment is one piece that ends its segment; closing still closes."""
    engine = SlowEngine(first_s=0.01)
    timed = RecordingEngine(engine)
    pieces = list(timed.stream("one two", "v", 1.0))
    assert [piece.segment_end for piece in pieces] == [True, True]
    assert all(piece.audio.shape == (10,) for piece in pieces)
    assert [call.text for call in timed.calls] == ["one two"]
    stopped = timed.stream("three four five", "v", 1.0)
    next(stopped)
    stopped.close()  # type: ignore[attr-defined]
    assert engine.closed[-1] == "three four five" and engine.segments_made == 3
