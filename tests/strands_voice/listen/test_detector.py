"""The sans-I/O turn detector: VAD probabilities in, turn events out, time counted in samples."""

from __future__ import annotations

import pytest
from strands_voice_protocol.errors import ConfigurationError

from strands_voice.listen._detector import (
    Paused,
    Quiet,
    Resumed,
    SpeechStarted,
    TurnDetector,
    TurnEnded,
    TurnEvent,
    TurnTooLong,
)
from strands_voice.listen._settings import ListenSettings

FRAME = 512  # 32 ms at 16 kHz
SETTINGS = ListenSettings(min_speech_s=0.2, end_silence_s=0.4, max_turn_s=3.0)


def run(detector: TurnDetector, probabilities: list[float]) -> list[tuple[int, TurnEvent]]:
    """Feed frames; each event with the index of the frame that caused it."""
    return [(i, event) for i, p in enumerate(probabilities) for event in detector.feed(p)]


def test_speech_starts_after_min_speech_and_is_dated_at_its_first_frame() -> None:
    detector = TurnDetector(SETTINGS)
    events = run(detector, [0.0] * 5 + [0.9] * 10)
    # 0.2 s = 3200 samples = 6.25 frames: the 7th speech frame (index 11) starts the turn.
    assert events == [(11, SpeechStarted(at=5 * FRAME))]
    assert detector.state == "speaking"


def test_a_cough_shorter_than_min_speech_starts_nothing() -> None:
    detector = TurnDetector(SETTINGS)
    assert run(detector, [0.9] * 4 + [0.0] * 30 + [0.9] * 3 + [0.0] * 5) == []
    assert detector.state == "idle"


def test_the_turn_ends_after_end_silence_and_a_short_pause_resumes() -> None:
    detector = TurnDetector(SETTINGS)
    probabilities = [0.9] * 10 + [0.0] * 5 + [0.9] * 10 + [0.0] * 20
    events = [event for _, event in run(detector, probabilities)]
    assert events == [
        SpeechStarted(at=0),
        Paused(at=10 * FRAME),
        Quiet(at=15 * FRAME),  # 0.15 s = 2400 samples: after the 5th silent frame
        Resumed(at=15 * FRAME),
        Paused(at=25 * FRAME),
        Quiet(at=30 * FRAME),
        TurnEnded(start=0, end=25 * FRAME),
    ]
    # 0.4 s = 6400 samples = 12.5 frames of silence: the 13th silent frame (index 37) ends it.
    assert [i for i, e in run(TurnDetector(SETTINGS), probabilities) if isinstance(e, TurnEnded)] == [37]


def test_probabilities_between_the_thresholds_keep_the_state() -> None:
    detector = TurnDetector(SETTINGS)
    events = [event for _, event in run(detector, [0.9] * 8 + [0.4] * 40)]
    assert events == [SpeechStarted(at=0)]  # 0.4 is above 0.5 - 0.15: still speech, never a pause


def test_a_caller_who_never_stops_is_cut_at_max_turn() -> None:
    detector = TurnDetector(SETTINGS)
    events = run(detector, [0.9] * 100)
    too_long = [(i, e) for i, e in events if isinstance(e, TurnTooLong | TurnEnded)]
    # 3.0 s = 48000 samples = 93.75 frames: the 94th frame (index 93) ends it.
    assert too_long == [(93, TurnTooLong(at=94 * FRAME)), (93, TurnEnded(start=0, end=94 * FRAME))]
    assert detector.state == "onset"  # the speech that goes on is the onset of a new turn


@pytest.mark.parametrize(
    "changes",
    [{"sample_rate": 8000}, {"vad_threshold": 1.5}, {"end_silence_s": 0.0}, {"pre_roll_s": -1.0}],
)
def test_settings_reject_what_cannot_work(changes: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        ListenSettings(**changes)  # type: ignore[arg-type]


def test_a_gap_between_words_is_a_pause_but_not_quiet() -> None:
    detector = TurnDetector(SETTINGS)
    events = [event for _, event in run(detector, [0.9] * 10 + [0.0] * 4 + [0.9] * 5)]
    assert events == [SpeechStarted(at=0), Paused(at=10 * FRAME), Resumed(at=14 * FRAME)]
