"""The sans-I/O turn detector: VAD probabilities in, the listener's events out, time counted in samples."""

from __future__ import annotations

import pytest
from strands_voice_protocol.errors import ConfigurationError

from strands_voice.listen import (
    CallerPaused,
    CallerResumed,
    EndOfTurn,
    ListenSettings,
    OnsetDropped,
    SpeechOnset,
    SpeechStarted,
    TurnDetector,
    TurnEnded,
    TurnTooLong,
)
from strands_voice.listen._detector import TRANSITIONS, Detected, JudgeTurn, SpeechState

FRAME = 512  # 32 ms at 16 kHz


def s(frames: int) -> float:
    """``frames`` frames, in seconds (as the detector computes them: samples / rate)."""
    return frames * FRAME / 16000


SETTINGS = ListenSettings(min_speech_s=0.2, end_silence_s=0.4, max_turn_s=3.0, speculate_after_s=0.064)


def run(detector: TurnDetector, probabilities: list[float]) -> list[tuple[int, Detected]]:
    """Feed frames; each event with the index of the frame that caused it."""
    return [(i, event) for i, p in enumerate(probabilities) for event in detector.feed(p)]


def test_speech_starts_after_min_speech_and_is_dated_at_its_first_frame() -> None:
    detector = TurnDetector(SETTINGS)
    events = run(detector, [0.0] * 5 + [0.9] * 10)
    # 0.2 s = 3200 samples = 6.25 frames: the 7th speech frame (index 11) starts the turn.
    assert events == [(5, SpeechOnset(s(5))), (11, SpeechStarted(s(5)))]
    assert detector.state is SpeechState.SPEAKING


def test_a_cough_shorter_than_min_speech_is_an_onset_dropped() -> None:
    detector = TurnDetector(SETTINGS)
    events = [event for _, event in run(detector, [0.9] * 4 + [0.0] * 30)]
    assert events == [SpeechOnset(0.0), OnsetDropped(s(4))]
    assert detector.state is SpeechState.IDLE


def test_the_silence_timer_ends_a_turn_and_a_short_pause_resumes() -> None:
    detector = TurnDetector(SETTINGS)
    probabilities = [0.9] * 10 + [0.0] * 5 + [0.9] * 10 + [0.0] * 20
    events = run(detector, probabilities)
    assert [event for _, event in events] == [
        SpeechOnset(0.0),
        SpeechStarted(0.0),
        CallerPaused(s(10)),
        JudgeTurn(1),  # 0.064 s = 2 silent frames
        CallerResumed(s(15)),
        CallerPaused(s(25)),
        JudgeTurn(2),
        TurnEnded(0.0, s(25), s(38), EndOfTurn("silence")),
    ]
    # 0.4 s = 6400 samples = 12.5 frames of silence: the 13th silent frame (index 37) ends it.
    assert [i for i, e in events if isinstance(e, TurnEnded)] == [37]


def test_a_complete_verdict_ends_the_turn_at_once_and_a_stale_one_does_nothing() -> None:
    detector = TurnDetector(SETTINGS, judged_by_model=True)
    run(detector, [0.9] * 10 + [0.0] * 3)
    assert detector.judged(1, complete=False, p=0.2) == []
    assert detector.judged(7, complete=True, p=0.9) == []  # not this pause
    assert detector.judged(1, complete=True, p=0.93) == [
        TurnEnded(0.0, s(10), s(13), EndOfTurn("model", 0.93))
    ]
    assert detector.state is SpeechState.IDLE
    assert detector.judged(1, complete=True, p=0.93) == []  # the turn already ended


def test_with_the_model_an_incomplete_turn_waits_for_the_longer_silence() -> None:
    settings = ListenSettings(min_speech_s=0.2, end_silence_s=0.4, incomplete_silence_s=1.0)
    detector = TurnDetector(settings, judged_by_model=True)
    run(detector, [0.9] * 10 + [0.0] * 3)
    detector.judged(1, complete=False, p=0.12)
    ended = [(i, e) for i, e in run(detector, [0.0] * 40) if isinstance(e, TurnEnded)]
    # 1.0 s = 31.25 frames of silence after the speech: the 32nd silent frame, index 28 here (3 fed before).
    assert ended == [(28, TurnEnded(0.0, s(10), s(42), EndOfTurn("silence", 0.12)))]


def test_a_verdict_that_names_a_wait_ends_the_turn_once_the_pause_lasts_that_long() -> None:
    settings = ListenSettings(min_speech_s=0.2, incomplete_silence_s=2.0)
    detector = TurnDetector(settings, judged_by_model=True)
    run(detector, [0.9] * 10 + [0.0] * 3)
    assert detector.judged(1, complete=False, p=0.3, wait_s=0.3) == []  # 3 frames = 0.096 s so far
    ended = [(i, e) for i, e in run(detector, [0.0] * 20) if isinstance(e, TurnEnded)]
    # 0.3 s = 9.4 frames of silence: the 10th silent frame, index 6 here (3 fed before), by the verdict.
    assert ended == [(6, TurnEnded(0.0, s(10), s(20), EndOfTurn("model", 0.3)))]


def test_a_wait_already_passed_when_the_verdict_comes_ends_the_turn_at_once() -> None:
    detector = TurnDetector(SETTINGS, judged_by_model=True)
    run(detector, [0.9] * 10 + [0.0] * 8)  # 0.256 s of silence before the verdict arrives
    assert detector.judged(1, complete=True, p=0.8, wait_s=0.2) == [
        TurnEnded(0.0, s(10), s(18), EndOfTurn("model", 0.8))
    ]


def test_a_wait_belongs_to_its_pause_the_caller_going_on_clears_it() -> None:
    settings = ListenSettings(min_speech_s=0.2, incomplete_silence_s=2.0)
    detector = TurnDetector(settings, judged_by_model=True)
    run(detector, [0.9] * 10 + [0.0] * 3)
    detector.judged(1, complete=False, p=0.3, wait_s=0.3)
    events = [e for _, e in run(detector, [0.9] * 5 + [0.0] * 30)]  # went on, then 0.96 s of silence
    assert not any(isinstance(e, TurnEnded) for e in events)


def test_probabilities_between_the_thresholds_keep_the_state() -> None:
    detector = TurnDetector(SETTINGS)
    events = [event for _, event in run(detector, [0.9] * 8 + [0.4] * 40)]
    assert events == [SpeechOnset(0.0), SpeechStarted(0.0)]  # 0.4 is above 0.5 - 0.15: never a pause


def test_a_caller_who_never_stops_is_cut_at_max_turn() -> None:
    detector = TurnDetector(SETTINGS)
    events = run(detector, [0.9] * 100)
    too_long = [(i, e) for i, e in events if isinstance(e, TurnTooLong | TurnEnded)]
    # 3.0 s = 48000 samples = 93.75 frames: the 94th frame (index 93) ends it.
    assert too_long == [(93, TurnTooLong(s(94))), (93, TurnEnded(0.0, s(94), s(94), EndOfTurn("max_turn")))]
    assert [e for _, e in events][-1] == SpeechOnset(s(94))  # the speech that goes on is a new turn


def test_every_transition_is_in_the_one_table() -> None:
    assert {(state.value, move.value) for state, move in TRANSITIONS} == {
        ("idle", "speech"),
        ("onset", "silence"),
        ("onset", "long enough"),
        ("speaking", "silence"),
        ("paused", "speech"),
        ("speaking", "over"),
        ("paused", "over"),
    }


@pytest.mark.parametrize(
    "changes",
    [
        {"sample_rate": 8000},
        {"vad_threshold": 1.5},
        {"end_silence_s": 0.0},
        {"pre_roll_s": -1.0},
        {"incomplete_silence_s": 0.0},
        {"end_of_turn": "guess"},
    ],
)
def test_settings_reject_what_cannot_work(changes: dict[str, float]) -> None:
    with pytest.raises(ConfigurationError):
        ListenSettings(**changes)  # type: ignore[arg-type]
