"""The eot-bench measure: the listener's detector replayed over recorded VAD probabilities, each system's
decision handed to it at every pause it judges (no models needed)."""

from __future__ import annotations

import json

import pytest
from strands_voice_tools.bench.eot_bench import eot_figures, format_eot, replay, sweep, verdict_wait
from strands_voice_tools.bench.eot_evidence import Evidence, TurnEvidence

from strands_voice.listen import THRESHOLDS

FRAME_S = 512 / 16000


def frames(seconds: float) -> int:
    return round(seconds / FRAME_S)


def turn(
    name: str, parts: list[tuple[float, float]], pauses: list[Evidence], human: bool = False
) -> TurnEvidence:
    """A turn of speech and silence (seconds each, 0.9 and 0.0 VAD probabilities), 3 s of silence after."""
    probabilities = [0.0] * frames(0.5)
    for speech_s, silence_s in parts:
        probabilities += [0.9] * frames(speech_s) + [0.0] * frames(silence_s)
    speech_end = 0.5 + sum(speech for speech, _ in parts) + sum(silence for _, silence in parts[:-1])
    probabilities += [0.0] * frames(3.0)
    return TurnEvidence(
        name,
        human,
        "",
        tuple(probabilities),
        dict(enumerate(pauses, 1)),
        frames(speech_end) * FRAME_S,
        len(parts) - 1,
        "",
    )


SET = [
    # A paused sentence: Smart Turn believes the first half; the words do not.
    turn(
        "paused",
        [(1.0, 0.8), (1.0, 0.0)],
        [
            Evidence("I would like to know,", 0.9, None),
            Evidence("I would like to know what it costs.", 0.9, None),
        ],
    ),
    # A human reader's statement: Smart Turn doubts it; the words and the fallen voice end it.
    turn("statement", [(1.5, 0.0)], [Evidence("Your message has been saved.", 0.2, -6.0)], human=True),
    # Digits in groups, 0.8 s apart, the audio sure after each.
    turn(
        "digits",
        [(0.8, 0.8), (0.8, 0.8), (0.9, 0.0)],
        [
            Evidence("4 1 5,", 0.95, None),
            Evidence("4 1 5, 5 5 5,", 0.95, None),
            Evidence("4 1 5, 5 5 5, 1 2 1 2.", 0.9, None),
        ],
    ),
    turn("question", [(1.2, 0.0)], [Evidence("What does it cost?", 0.97, None)]),
]


def test_the_verdict_cuts_no_one_here_and_ends_the_statement_within_a_breath() -> None:
    cut, delays = replay(SET, verdict_wait(1.0))
    assert cut == 0
    assert delays[0] == pytest.approx(THRESHOLDS.complete_wait_s, abs=2 * FRAME_S)
    assert delays[1] == pytest.approx(THRESHOLDS.complete_wait_s, abs=2 * FRAME_S)
    assert delays[2] == pytest.approx(THRESHOLDS.number_wait_s, abs=2 * FRAME_S)  # a number may go on
    assert delays[3] == pytest.approx(THRESHOLDS.question_wait_s, abs=2 * FRAME_S)


def test_smart_turn_alone_cuts_the_paused_sentence_and_the_number_when_it_is_fast() -> None:
    fast = [o for o in sweep(SET, "smart_turn") if o.mean_delay <= 0.3]
    assert fast and min(o.cut for o in fast) == 2


def test_the_silence_timer_cuts_every_pause_longer_than_itself() -> None:
    by_timeout = {o.setting: o for o in sweep(SET, "silence")}
    assert by_timeout[0.5].cut == 2 and by_timeout[0.5].delays == pytest.approx((0.5, 0.5), abs=2 * FRAME_S)
    assert by_timeout[1.0].cut == 0 and by_timeout[1.0].mean_delay == pytest.approx(1.0, abs=2 * FRAME_S)


def test_the_figures_name_each_system_side_by_side_and_are_json() -> None:
    figures = eot_figures(SET)
    assert set(figures["systems"]) == {"verdict", "smart_turn", "silence"}
    assert figures["systems"]["verdict"]["cut_at_500ms"] == 0.0
    assert figures["systems"]["silence"]["delay_at_5pct_s"] == pytest.approx(0.85, abs=2 * FRAME_S)
    assert figures["shipped_verdict"]["human"]["within_500ms"] == 1
    json.dumps(figures, allow_nan=False)
    table = format_eot(figures)
    assert "verdict" in table and "smart_turn" in table and "silence" in table
