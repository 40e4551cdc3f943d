"""A segment after its request's first: its first window is as long as the audio before it, a pure function
of the request; the pipeline tells each phrase how much audio came before it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.engines.interface import WindowedEngine
from kokoro_endpoint.engines.onnx.windows import Window, WindowPlan, WindowStitcher
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.pipeline import synthesize_segments
from kokoro_endpoint.engines.silence import SilencePolicy


@given(frames=st.integers(1, 600), produced=st.integers(0, 400))
@example(frames=192, produced=219)
@example(frames=161, produced=413)
def test_later_segments_cover_each_frame_once_from_a_larger_first_window(frames: int, produced: int) -> None:
    plan = WindowPlan()
    windows = list(plan.windows(frames, produced))
    assert windows[0].start == 0 and windows[-1].stop == frames
    for before, after in itertools.pairwise(windows):
        assert before.stop == after.start
    for window in windows:
        assert 0 <= window.lo <= window.start < window.stop <= window.hi <= frames
    first = min(plan.largest, max(plan.first, produced))
    if len(windows) > 1:
        assert windows[0].stop == first
        # No smaller right context than the others': the audio before it is still playing.
        right = plan.context if produced else plan.first_context
        assert windows[0].hi == min(frames, first + right)
    elif plan.windowed(frames):
        assert frames < first + plan.smallest  # decoded whole: no longer than the window it would open
    if produced == 0:
        assert windows == list(plan.windows(frames))  # a request's first segment: as before


def test_a_later_segment_no_longer_than_the_audio_before_it_is_decoded_whole() -> None:
    plan = WindowPlan()
    assert list(plan.windows(161, produced=219)) == [Window(0, 161, 0, 161)]
    assert list(plan.windows(195, produced=223)) == [Window(0, 195, 0, 195)]
    assert [w.stop - w.start for w in plan.windows(240, produced=223)] == [200, 40]
    assert [w.hi - w.lo for w in plan.windows(217)] == [18, 52, 80, 128, 53]  # the first segment's windows


@given(frames=st.integers(49, 400), produced=st.integers(1, 300))
def test_stitching_a_later_segments_windows_of_one_signal_gives_that_signal(
    frames: int, produced: int
) -> None:
    hop = 600
    signal = np.random.default_rng(frames).standard_normal(frames * hop).astype(np.float32)
    stitcher = WindowStitcher(hop, frames * hop, crossfade=240)
    windows = WindowPlan().windows(frames, produced)
    out = [stitcher.add(w, signal[w.lo * hop : w.hi * hop]) for w in windows]
    np.testing.assert_allclose(np.concatenate(out), signal, atol=1e-6)


class _ToneWindowedEngine:
    """A windowed engine that speaks 0.5 s of tone per call and records each call's ``produced_s``."""

    name = "tone"
    sample_rate = 24_000
    default_voice = "v"
    voices = frozenset({"v"})
    windowed = True

    def __init__(self) -> None:
        self.produced: list[tuple[str, float]] = []

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        return (piece.audio for piece in self.stream(text, voice, speed))

    def stream(self, text: str, voice: str, speed: float, produced_s: float = 0.0) -> Iterator[SpeechPiece]:
        self.produced.append((text, produced_s))
        yield SpeechPiece(np.full(12_000, 0.2, np.float32), True)


def test_each_phrase_is_told_the_audio_its_request_produced_before_it() -> None:
    engine = _ToneWindowedEngine()
    assert isinstance(engine, WindowedEngine)
    for policy in (None, SilencePolicy()):  # the engine's audio, counted before the policy shapes it
        engine.produced.clear()
        list(synthesize_segments(engine, "One. Two. Three.", "v", 1.0, None, policy))
        assert engine.produced == [("One.", 0.0), ("Two.", 0.5), ("Three.", 1.0)]


def test_the_onnx_engine_opens_a_later_phrase_with_a_larger_window(onnx_engine: Any) -> None:
    text = "The old lighthouse keeper climbed the narrow spiral stairs every evening to light the lamp."
    voice = onnx_engine.default_voice
    first = [piece.audio for piece in onnx_engine.stream(text, voice, 1.0)]
    later = [piece.audio for piece in onnx_engine.stream(text, voice, 1.0, produced_s=2.0)]
    again = [piece.audio for piece in onnx_engine.stream(text, voice, 1.0, produced_s=2.0)]
    assert len(later) < len(first)  # fewer windows
    assert sum(map(len, later)) == sum(map(len, first))  # the same frames, cut otherwise
    for mine, same in zip(later, again, strict=True):  # a pure function of the request
        np.testing.assert_array_equal(mine, same)
