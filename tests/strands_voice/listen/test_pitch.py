"""The end-pitch cue: the F0 tracker on voiced sounds whose pitch is known, and the fall it reports."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from strands_voice.listen import final_fall, pitch_track

RATE = 16000


def voice(start_hz: float, end_hz: float, seconds: float = 1.5) -> npt.NDArray[np.float32]:
    """A voice-like sound (14 harmonics) whose pitch glides from ``start_hz`` to ``end_hz``."""
    frequency = np.linspace(start_hz, end_hz, int(seconds * RATE))
    phase = np.cumsum(2 * np.pi * frequency / RATE)
    return (0.1 * sum(np.sin(k * phase) / k for k in range(1, 15))).astype(np.float32)


@pytest.mark.parametrize("hz", [90.0, 150.0, 240.0])
def test_the_tracker_finds_a_steady_pitch(hz: float) -> None:
    track = pitch_track(voice(hz, hz))
    assert np.nanmedian(track) == pytest.approx(hz, rel=0.02)
    assert np.count_nonzero(np.isnan(track)) <= 2


def test_a_falling_voice_falls_a_rising_one_rises_a_level_one_holds() -> None:
    falling, rising, level = (
        final_fall(voice(220, 150)),
        final_fall(voice(150, 220)),
        final_fall(voice(180, 180)),
    )
    assert falling is not None and falling < -2.5
    assert rising is not None and rising > 2.5
    assert level is not None and abs(level) < 0.3


def test_a_fall_of_eight_semitones_is_read_as_one_not_as_an_octave_error() -> None:
    """A statement's voice can end 8 semitones under its register (a recorded prompt's did)."""
    fall = final_fall(np.concatenate([voice(200, 200, 1.0), voice(200, 115, 0.6)]))
    assert fall is not None and fall < -6.0


def test_silence_and_noise_have_no_pitch() -> None:
    noise = np.random.default_rng(7).normal(scale=0.05, size=RATE).astype(np.float32)
    assert final_fall(np.zeros(RATE, dtype=np.float32)) is None
    assert final_fall(noise) is None
    assert final_fall(voice(150, 150, 0.05)) is None  # too short to tell
