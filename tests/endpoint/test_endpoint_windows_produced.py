"""A segment after its request's first: its first window is as long as the audio before it (pure)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.engines.windows import Window, WindowPlan, WindowStitcher


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
    assert [w.stop - w.start for w in plan.windows(192, produced=219)] == [160, 32]
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
