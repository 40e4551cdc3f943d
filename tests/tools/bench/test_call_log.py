"""The turn-taking calls' arithmetic, on made-up call logs (no sockets, no clock): the player that honours
the system's events, each utterance's figures, a system's summary, and the silence timer's sweep."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from strands_voice_tools.bench.call_figures import ms_summary, silence_sweep, summarize_turns
from strands_voice_tools.bench.call_log import (
    REACTION_WINDOW_S,
    CallLog,
    Utterance,
    play,
    silent_from,
    timeline,
    turn_figures,
)

RATE = 24000


def tone(seconds: float) -> bytes:
    """Loud 24 kHz PCM16 (audible from its first sample)."""
    t = np.arange(round(seconds * RATE)) / RATE
    return (np.sin(2 * np.pi * 220 * t) * 0.3 * 32767).astype("<i2").tobytes()


def silence(seconds: float) -> bytes:
    return bytes(2 * round(seconds * RATE))


def final(text: str = "", **extra: Any) -> dict[str, Any]:
    return {"type": "transcript", "role": "user", "final": True, "text": text, **extra}


def said(kind: Any, start: float, end: float, text: str = "") -> Utterance:
    return Utterance(kind, text, "jm_kumo", start, end)


def test_the_player_plays_in_real_time_from_each_arrival_and_waits_when_dry() -> None:
    log = CallLog(audio=[(1.0, tone(1.0)), (1.5, tone(1.0)), (5.0, tone(0.5))])
    assert play(log) == [(1.0, 3.0), (5.0, 5.5)]


def test_a_short_stall_does_not_end_the_playback_but_a_long_one_does() -> None:
    log = CallLog(audio=[(1.0, tone(1.0)), (2.2, tone(1.0)), (3.8, tone(1.0))])
    assert play(log) == [(1.0, 3.2), (3.8, 4.8)]  # 0.2 s late: one answer; 0.6 s: a silence
    assert play(log, stall_s=0.0) == [(1.0, 2.0), (2.2, 3.2), (3.8, 4.8)]


def test_paused_keeps_the_buffer_resumed_plays_it_on_interrupted_drops_it() -> None:
    log = CallLog(
        audio=[(0.0, tone(4.0))],
        events=[
            (1.0, {"type": "speech_paused"}),
            (2.0, {"type": "speech_resumed"}),
            (3.0, {"type": "interrupted"}),
        ],
    )
    # 1 s played, paused 1 s, plays on (3 s left) until the interruption drops the rest.
    assert play(log) == [(0.0, 1.0), (2.0, 3.0)]


def test_a_question_gives_its_end_of_turn_delay_and_voice_to_voice() -> None:
    log = CallLog(
        said=[said("question", 1.0, 3.0, "What does the premium plan cost?")],
        events=[(3.4, final("What is the premium plan cost?", end_of_turn={"by": "model", "p": 0.9}))],
        audio=[(4.0, silence(0.25) + tone(1.0))],  # the player hears the sound 0.25 s after the first byte
    )
    (figures,) = turn_figures(log)
    assert figures.finals == 1 and figures.end_of_turn_by == "model"
    assert figures.end_of_turn_s == pytest.approx(0.4)
    assert figures.voice_to_voice_s == pytest.approx(1.25)


def test_a_paused_sentence_is_cut_when_a_turn_ends_in_its_pause_or_it_makes_two_turns() -> None:
    text = "I would like to know, what the Premium plan includes."
    early = CallLog(said=[said("paused", 1.0, 4.0, text)], events=[(2.5, final())])
    late_two = CallLog(
        said=[said("paused", 1.0, 4.0, text)],
        events=[(4.3, final("I would like to know")), (4.6, final("what the premium plan includes"))],
    )
    whole = CallLog(said=[said("paused", 1.0, 4.0, text)], events=[(4.5, final("I would like to know what"))])
    assert turn_figures(early)[0].cut is True
    assert turn_figures(late_two)[0].cut is True
    (kept,) = turn_figures(whole)
    assert kept.cut is False and kept.end_of_turn_s == pytest.approx(0.5)


def test_a_late_transcript_of_an_earlier_utterance_is_not_taken_for_the_next_ones() -> None:
    log = CallLog(
        said=[
            said("backchannel", 1.0, 1.5, "Uh-huh."),
            said("paused", 3.0, 6.0, "My order number is four two seven."),
        ],
        events=[(3.5, final("We're hands.")), (6.4, final("My order number is 427."))],
    )
    _backchannel, paused = turn_figures(log)
    assert paused.finals == 1 and paused.cut is False  # "We're hands." shares no word with it


def test_a_backchannel_that_ended_the_answer_is_a_false_barge_in_with_its_reaction() -> None:
    log = CallLog(
        said=[said("backchannel", 2.0, 2.5, "Uh-huh."), said("question", 9.0, 10.0, "Can I cancel?")],
        events=[(2.3, {"type": "interrupted"})],
        audio=[(0.0, tone(6.0))],
    )
    backchannel, _question = turn_figures(log)
    assert backchannel.over_answer is True and backchannel.stopped is True
    assert backchannel.reaction_s == pytest.approx(0.3) and backchannel.interrupted_s == pytest.approx(0.3)


def test_a_pause_then_a_resume_is_a_reaction_but_not_a_stop() -> None:
    log = CallLog(
        said=[said("backchannel", 2.0, 2.5, "Mm-hmm.")],
        events=[(2.2, {"type": "speech_paused"}), (3.0, {"type": "speech_resumed"})],
        audio=[(0.0, tone(6.0))],
    )
    (backchannel,) = turn_figures(log)
    assert backchannel.stopped is False
    assert backchannel.paused_s == pytest.approx(0.2) and backchannel.reaction_s == pytest.approx(0.2)


def test_a_final_that_counts_for_no_turn_is_not_the_end_of_a_turn() -> None:
    log = CallLog(
        said=[said("backchannel", 2.0, 2.5, "Uh-huh.")],
        events=[
            (2.2, {"type": "speech_paused"}),
            (2.9, final("Uh-huh.", counts=False)),
            (3.0, {"type": "speech_resumed"}),
        ],
        audio=[(0.0, tone(6.0))],
    )
    (backchannel,) = turn_figures(log)
    assert backchannel.finals == 0 and backchannel.end_of_turn_s is None
    assert [event[1] for event in timeline(log)["events"]] == ["speech_paused", "speech_resumed"]


def test_without_events_the_audio_stopping_is_the_reaction_and_the_answer_playing_on_is_none() -> None:
    stopped = CallLog(said=[said("interruption", 2.0, 4.0, "Stop please.")], audio=[(0.0, tone(2.4))])
    ignored = CallLog(said=[said("noise", 2.0, 2.3)], audio=[(0.0, tone(8.0))])
    assert turn_figures(stopped)[0].reaction_s == pytest.approx(0.4)
    (noise,) = turn_figures(ignored)
    assert noise.over_answer is True and noise.reaction_s is None and noise.stopped is False


def test_an_interruption_after_the_audio_ran_dry_counts_from_its_last_sound() -> None:
    spans = [(0.0, 2.1), (2.6, 2.7)]  # dry at 2.1, a little more audio, then `interrupted` at 2.9
    assert silent_from(spans, 2.0, 2.9) == pytest.approx(2.7)
    # An event past the reaction window does not count: the 0.5 s silence after 2.1 s does.
    assert silent_from(spans, 2.0, 2.0 + REACTION_WINDOW_S + 1) == pytest.approx(2.1)
    assert silent_from([(0.0, 2.1), (2.3, 9.0)], 2.0, None) is None  # a 0.2 s stall is no reaction


def test_said_over_nothing_is_left_out_of_the_reactions() -> None:
    log = CallLog(said=[said("backchannel", 5.0, 5.5, "Right.")], audio=[(0.0, tone(1.0))])
    (figures,) = turn_figures(log)
    assert figures.over_answer is False and figures.reaction_s is None


def test_a_systems_summary_counts_and_takes_medians_and_p95() -> None:
    log = CallLog(
        said=[
            said("question", 0.0, 1.0, "What does the premium plan cost?"),
            said("backchannel", 3.0, 3.4, "Uh-huh."),
            said("interruption", 5.0, 7.0, "Stop please. What does it cost?"),
            said("paused", 12.0, 15.0, "So the thing is, my payment did not go through."),
        ],
        events=[
            (1.5, final("What does the premium plan cost?", end_of_turn={"by": "silence"})),
            (5.25, {"type": "interrupted"}),
            (7.5, final("What does it cost?")),
            (13.0, final("So the thing is.")),
            (15.5, final("My payment did not go through.")),
        ],
        audio=[(2.0, tone(8.0))],
    )
    summary = summarize_turns(turn_figures(log))
    assert summary["voice_to_voice_ms"]["median"] == pytest.approx(1000.0)
    assert summary["barge_in_ms"]["values"] == [250.0]
    assert summary["cut_mid_sentence"] == {"n": 1, "of": 1}
    assert summary["backchannel_stops"] == {"n": 0, "of": 1}
    assert summary["false_barge_ins"] == {"n": 0, "of": 1}
    assert summary["end_of_turn_by"] == {"silence": 1}
    assert ms_summary([0.1, None, 0.3]) == {"median": 200.0, "p95": 290.0, "n": 2, "values": [100.0, 300.0]}
    assert ms_summary([None]) is None


def test_the_silence_sweep_finds_the_shortest_timer_under_five_percent_cuts() -> None:
    pauses = [0.80] * 19 + [0.95]  # the longest pause of each of 20 paused sentences
    sweep = silence_sweep(pauses, measured_delay_s=0.55, measured_timer_s=0.4)
    rows = {row["timer_s"]: row for row in sweep["rows"]}
    assert rows[0.8]["cut_rate"] == 1.0 and rows[0.85]["cut_rate"] == 0.05
    assert sweep["timer_s_at_target"] == 0.85
    assert sweep["delay_ms_at_target"] == pytest.approx(1000.0)  # 0.55 s measured, +0.45 s of timer
    assert silence_sweep([], None, 0.4)["timer_s_at_target"] is None


def test_speaking_over_a_stalled_answer_counts_from_the_systems_stop() -> None:
    log = CallLog(
        said=[said("backchannel", 1.8, 2.2, "Uh-huh.")],
        events=[(2.1, {"type": "interrupted"})],
        audio=[(0.0, tone(1.0))],  # the answer's audio ran dry at 1.0 s: it had stalled, not stopped
    )
    (backchannel,) = turn_figures(log)
    assert backchannel.over_answer is True and backchannel.reaction_s == pytest.approx(0.3)


def test_voice_to_voice_takes_the_audio_after_the_questions_turn_not_a_late_answer_before_it() -> None:
    log = CallLog(
        said=[said("question", 1.0, 3.0, "Can I cancel my plan at any time?")],
        events=[(3.5, final("Can I cancel my plan at any time?"))],
        audio=[(2.0, tone(0.5)), (4.5, tone(1.0))],  # "Okay." to an earlier turn, then the answer
    )
    assert turn_figures(log)[0].voice_to_voice_s == pytest.approx(1.5)


def test_a_calls_timeline_keeps_what_was_said_the_turn_events_and_the_playback() -> None:
    log = CallLog(
        said=[said("question", 10.0, 11.5, "Can I cancel?")],
        events=[
            (10.2, {"type": "transcript", "role": "user", "final": False, "text": "Can"}),
            (11.9, final("Can I cancel?", end_of_turn={"by": "model", "p": 0.93})),
            (12.0, {"type": "text_delta", "text": "Yes"}),
            (13.0, {"type": "speech_paused", "heard_ms": 500}),
        ],
        audio=[(12.5, tone(1.0))],
    )
    assert timeline(log) == {
        "said": [["question", "Can I cancel?", 0, 1500]],
        "events": [
            [1900, "transcript", {"text": "Can I cancel?", "end_of_turn": {"by": "model", "p": 0.93}}],
            [3000, "speech_paused"],
        ],
        "spans": [[2500, 3000]],
    }
