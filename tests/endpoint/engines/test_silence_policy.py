"""Silence policy (pure): what is trimmed, what is kept, the pauses, and the session parameters."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kokoro_endpoint.engines.silence import SegmentShaper, SilencePolicy, pause_after, session_policy

RATE = 24_000


def _segment(lead: int, speech: int, trail: int, seed: int = 0) -> npt.NDArray[np.float32]:
    """Quiet noise (-80 dBFS), then a loud tone with noise, then quiet noise again."""
    rng = np.random.default_rng(seed)
    quiet = lambda n: (rng.standard_normal(n) * 1e-4).astype(np.float32)  # noqa: E731
    tone = (0.3 * np.sin(np.arange(speech) * 2 * np.pi * 220 / RATE)).astype(np.float32)
    return np.concatenate([quiet(lead), tone, quiet(trail)])


def _shape(
    audio: npt.NDArray[np.float32], cuts: list[int], policy: SilencePolicy, pause_ms: float
) -> np.ndarray:
    shaper = SegmentShaper(policy, RATE)
    out = []
    edges = [0, *sorted(c % (len(audio) + 1) for c in cuts), len(audio)]
    for start, stop in itertools.pairwise(edges):
        out.append(shaper.feed(audio[start:stop]))
    out.append(shaper.end_segment(pause_ms))
    return np.concatenate(out)


@given(cuts=st.lists(st.integers(0, 40_000), max_size=6))
@example(cuts=[])
@example(cuts=[7_920, 7_921])
def test_speech_is_kept_sample_exact_however_the_audio_arrives(cuts: list[int]) -> None:
    policy = SilencePolicy()
    audio = _segment(lead=7_920, speech=12_000, trail=10_000)
    shaped = _shape(audio, cuts, policy, pause_ms=300)
    lead = round(RATE * policy.lead_ms / 1000)
    # The tone starts 10 ms (lead_ms) into what is sent, and every tone sample is untouched.
    start = 7_920 - lead
    np.testing.assert_array_equal(shaped[lead : lead + 12_000], audio[7_920 : 7_920 + 12_000])
    assert np.array_equal(shaped[: lead + 12_000], _shape(audio, [], policy, 300)[: lead + 12_000])
    # Kept after the tone: tail_ms (faded), then exactly the 300 ms pause of zeros.
    tail = round(RATE * policy.tail_ms / 1000)
    assert len(shaped) == lead + 12_000 + tail + round(0.3 * RATE)
    assert not shaped[lead + 12_000 + tail :].any()
    assert start > 0


def test_fades_make_the_joins_smooth() -> None:
    policy = SilencePolicy()
    audio = _segment(lead=5_000, speech=4_800, trail=5_000) * 50  # loud "silence" (-34 dBFS peaks)
    audio[:5_000] = np.linspace(0, 0.002, 5_000)  # a ramp below the threshold: cut, then faded in
    shaped = _shape(audio, [], policy, pause_ms=150)
    assert shaped[0] == pytest.approx(0.0, abs=1e-3)
    assert np.abs(np.diff(shaped)).max() <= np.abs(np.diff(audio)).max() + 1e-6


def test_a_silent_segment_gives_only_its_pause() -> None:
    shaper = SegmentShaper(SilencePolicy(), RATE)
    assert shaper.feed(np.zeros(10_000, dtype=np.float32)).size == 0
    pause = shaper.end_segment(100)
    assert len(pause) == 2_400 and not pause.any()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("It works.", 300.0),
        ('He said "yes!"', 300.0),
        ("First, second,", 150.0),
        ("and then the", 0.0),
        ("Wait —", 150.0),
        ("", 0.0),
    ],
)
def test_pause_follows_how_the_text_ends(text: str, expected: float) -> None:
    assert pause_after(text, SilencePolicy()) == expected


def test_session_parameters_override_the_pauses() -> None:
    base = SilencePolicy()
    assert session_policy(base, {}) is base
    changed = session_policy(base, {"sentence_pause_ms": "450", "clause_pause_ms": "90", "trim": "true"})
    assert (changed.sentence_pause_ms, changed.clause_pause_ms, changed.trim) == (450.0, 90.0, True)
    assert session_policy(base, {"trim": "0"}).trim is False
    for bad in ({"trim": "maybe"}, {"sentence_pause_ms": "x"}, {"word_pause_ms": "-1"}):
        with pytest.raises(ValueError, match="must be"):
            session_policy(base, bad)


def test_policy_rejects_fades_longer_than_the_kept_edges() -> None:
    with pytest.raises(ValueError, match="fade_ms"):
        SilencePolicy(lead_ms=2.0, fade_ms=4.0)


@given(cuts=st.lists(st.integers(0, 40_000), max_size=6))
@example(cuts=[])
@example(cuts=[7_920, 7_921])
def test_the_shaper_says_how_much_leading_silence_it_dropped(cuts: list[int]) -> None:
    """``lead_dropped`` counts the samples cut before the first kept one, however the audio arrives."""
    policy = SilencePolicy()
    audio = _segment(lead=7_920, speech=12_000, trail=10_000)
    shaper = SegmentShaper(policy, RATE)
    edges = [0, *sorted(c % (len(audio) + 1) for c in cuts), len(audio)]
    kept_before: int | None = None
    sent = 0
    for start, stop in itertools.pairwise(edges):
        out = shaper.feed(audio[start:stop])
        if shaper.sounding and kept_before is None:
            kept_before = sent
            dropped = shaper.lead_dropped
        sent += len(out)
    assert kept_before == 0
    # The tone starts at sample 7,920 of the segment and lead_ms into what was sent.
    assert dropped == 7_920 - round(RATE * policy.lead_ms / 1000)
    shaper.end_segment(0.0)
    assert not shaper.sounding and shaper.lead_dropped == 0
