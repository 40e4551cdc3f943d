"""Windowed decoding (pure): the plan covers every frame once, and stitching is exact on one signal."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.engines.onnx.windows import Window, WindowPlan, WindowStitcher
from kokoro_endpoint.text.segmentation import MAX_PHONEMES, split_phonemes


@given(frames=st.integers(1, 600), first=st.integers(1, 40), context=st.integers(1, 20))
@example(frames=49, first=20, context=16)
def test_windows_cover_each_frame_once_with_context_inside_the_segment(
    frames: int, first: int, context: int
) -> None:
    plan = WindowPlan(first=first, context=context)
    windows = list(plan.windows(frames))
    assert windows[0].start == 0 and windows[-1].stop == frames
    for before, after in itertools.pairwise(windows):
        assert before.stop == after.start
    for window in windows:
        assert 0 <= window.lo <= window.start < window.stop <= window.hi <= frames
    if len(windows) > 1:
        assert windows[0].stop - windows[0].start == first
        assert windows[0].hi == min(frames, first + plan.first_context)  # a shorter first right context
        assert all(w.stop - w.start >= plan.smallest for w in windows[1:])


@given(frames=st.integers(1, 400), seed=st.integers(0, 3))
@example(frames=60, seed=0)
def test_stitching_windows_of_one_signal_gives_that_signal(frames: int, seed: int) -> None:
    hop = 600
    signal = np.random.default_rng(seed).standard_normal(frames * hop).astype(np.float32)
    stitcher = WindowStitcher(hop, frames * hop, crossfade=240)
    out = [stitcher.add(w, signal[w.lo * hop : w.hi * hop]) for w in WindowPlan().windows(frames)]
    np.testing.assert_allclose(np.concatenate(out), signal, atol=1e-6)


def test_stitcher_refuses_context_shorter_than_the_crossfade() -> None:
    stitcher = WindowStitcher(10, 100, crossfade=40)
    with pytest.raises(ValueError, match="context"):
        stitcher.add(Window(0, 5, 0, 5), np.zeros(50, dtype=np.float32))
    with pytest.raises(ValueError, match="length"):
        stitcher.add(Window(0, 5, 0, 7), np.zeros(50, dtype=np.float32))


_PHONEME_WORDS = st.lists(st.text("ðəɹˈɛdkItsɜlvæ", min_size=1, max_size=12), min_size=1, max_size=80)


@given(words=_PHONEME_WORDS, head=st.integers(0, 80))
@example(words=["ði", "ˈOld"] * 60, head=64)
def test_a_long_sentence_is_encoded_head_first_and_nothing_is_lost(words: list[str], head: int) -> None:
    phonemes = " ".join(words)
    pieces = WindowPlan(head_phonemes=head).encoder_pieces(phonemes)
    # Every phoneme is kept, in order; between words wherever every word fits in a piece.
    assert "".join(pieces).replace(" ", "") == phonemes.replace(" ", "")
    if max(map(len, words)) <= head:
        assert " ".join(pieces).split() == phonemes.split()
    assert all(0 < len(piece) <= MAX_PHONEMES for piece in pieces)
    if head and len(phonemes) > 2 * head:
        assert len(pieces[0]) <= head and len(pieces) >= 2
    else:
        assert pieces == split_phonemes(phonemes, MAX_PHONEMES)  # short sentences are encoded whole
    # A pure function of the text: a resumed request is cut exactly the same way.
    assert WindowPlan(head_phonemes=head).encoder_pieces(phonemes) == pieces


def test_the_head_is_cut_at_the_best_boundary() -> None:
    phonemes = "ə" * 40 + ", " + "b" * 10 + " " + "c" * 100
    head, *rest = WindowPlan(head_phonemes=64).encoder_pieces(phonemes)
    assert head == "ə" * 40 + "," and rest == ["b" * 10 + " " + "c" * 100]


def test_a_short_segment_is_decoded_whole_as_before_the_first_window_shrank() -> None:
    plan = WindowPlan()
    assert not plan.windowed(plan.whole_frames) and plan.windowed(plan.whole_frames + 1)
    assert list(plan.windows(plan.whole_frames)) == [Window(0, 48, 0, 48)]
    # A plan whose first window and context need more frames than that windows later, as it always did.
    assert not WindowPlan(first=40).windowed(60) and WindowPlan(first=40).windowed(69)
