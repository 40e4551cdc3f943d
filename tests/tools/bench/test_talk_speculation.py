"""``bench --talk``'s speculation figures: a system's summary from its calls, and the table."""

from __future__ import annotations

from strands_voice_tools.bench.call_log import UtteranceFigures
from strands_voice_tools.bench.talk_speculation import _system_figures, format_speculation


def test_model_calls_are_counted_per_answered_turn_and_voice_to_voice_on_questions() -> None:
    figures = [
        UtteranceFigures(
            "question", "What does it cost?", "af_heart", voice_to_voice_s=0.7, end_of_turn_s=0.2
        ),
        UtteranceFigures("question", "Can I cancel?", "af_heart", voice_to_voice_s=0.9, end_of_turn_s=0.3),
        UtteranceFigures("backchannel", "Uh-huh.", "af_heart"),
        UtteranceFigures("interruption", "Wait, stop.", "af_heart"),
        UtteranceFigures("paused", "I would like to know ...", "af_heart", cut=False),
    ]
    summary = _system_figures(figures, model_calls=6)
    assert summary["turns"] == 4 and summary["model_calls_per_turn"] == 1.5
    assert summary["voice_to_voice_ms"]["median"] == 800.0
    assert summary["after_turn_end_ms"]["median"] == 550.0
    assert summary["cut_mid_sentence"] == 0


def test_the_table_shows_each_system_side_by_side() -> None:
    on = {"name": "/ws, speculation", **_system_figures([], 0)}
    table = format_speculation({"trials": 2, "systems": [on]})
    assert "/ws, speculation" in table and "model calls" in table


def test_the_model_request_is_timed_through_both_clients_against_the_stand_in() -> None:
    import asyncio

    from strands_voice_tools.bench.model_client import CLIENTS, bench_model_client, format_model_client

    results = asyncio.run(bench_model_client(requests=2))
    for name in CLIENTS:
        first, whole = results[name]["first_token_ms"], results[name]["answer_ms"]
        assert first["n"] == whole["n"] == 2
        assert all(0 < at <= end for at, end in zip(first["values"], whole["values"], strict=True))
    assert "kept client" in format_model_client(results)
