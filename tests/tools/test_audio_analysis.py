"""First audible sound: where it is in a stream and when a real-time player plays it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strands_voice_tools.audio_analysis import FirstHeard, first_audible_sample, pcm16_to_float

RATE = 24_000


def _pcm(silence_s: float, sound_s: float, level: float = 0.1) -> bytes:
    samples = np.concatenate(
        [np.zeros(round(silence_s * RATE)), level * np.sin(np.arange(round(sound_s * RATE)) * 0.2)]
    )
    return (samples * 32767).astype("<i2").tobytes()


def test_first_audible_window_is_found_at_the_threshold() -> None:
    quiet = np.full(2400, 10 ** (-45 / 20), dtype=np.float32)  # -45 dBFS: not audible
    loud = np.full(2400, 10 ** (-35 / 20), dtype=np.float32)
    assert first_audible_sample(quiet, RATE) is None
    assert first_audible_sample(np.concatenate([quiet, loud]), RATE) == 2400
    assert first_audible_sample(np.zeros(100, dtype=np.float32), RATE) is None
    assert pcm16_to_float(b"\x00\x80\x01").tolist() == [-1.0]


@given(chunk=st.integers(2, 40_000).map(lambda n: n - n % 2))
def test_heard_time_is_first_byte_plus_offset_when_audio_keeps_up(chunk: int) -> None:
    pcm = _pcm(0.33, 0.5)
    heard = FirstHeard(RATE)
    for start in range(0, len(pcm), chunk):
        heard.feed(1.0, pcm[start : start + chunk])  # all there before it plays
    assert heard.first_byte_at == 1.0
    assert heard.sound_offset_s == pytest.approx(0.33, abs=0.0101)
    assert heard.heard_at == pytest.approx(1.33, abs=0.0101)


def test_a_late_chunk_delays_what_is_heard() -> None:
    pcm = _pcm(0.30, 0.2)
    heard = FirstHeard(RATE)
    assert heard.feed(0.0, pcm[:4800]) is None  # 100 ms of silence, playing 0.0-0.1
    assert heard.feed(2.0, pcm[4800:]) == pytest.approx(2.2, abs=0.0101)  # the player waited until 2.0
