"""The scheduling bench's pure parts: per-session summaries and the side-by-side table."""

from __future__ import annotations

from strands_voice_tools.bench.schedule import SessionRun, summarize_sessions
from strands_voice_tools.bench.schedule_report import format_schedule


def test_summary_counts_sessions_that_never_stalled() -> None:
    runs = [SessionRun(0.5, 0.0, 10.0), SessionRun(1.5, 2.0, 10.0), SessionRun(1.0, 0.0, 10.0)]
    summary = summarize_sessions(runs)
    assert summary["ttfa_p50_s"] == 1.0
    assert summary["ttfa_p95_s"] == 1.45
    assert summary["zero_stall"] == 2
    assert summary["stall_mean_s"] == round(2.0 / 3, 3)
    assert summary["stall_max_s"] == 2.0


def test_table_has_one_row_per_session_count_and_policy_and_the_load_figure() -> None:
    def row(ttfa: float, stall: float, rounds: int = 1) -> dict[str, object]:
        # Staggered rows keep one load average per round; the load figure's is one reading.
        load: object = [[2.0, 1.0, 0.5]] * rounds if rounds else [2.0, 1.0, 0.5]
        return {**summarize_sessions([SessionRun(ttfa, stall, 5.0)]), "load_average": load}

    results = {
        "config": {"sessions": [1, 4], "stagger_s": 0.7},
        "machine": {"cpu_model": "test"},
        "staggered": {
            "fifo": {"1": row(0.7, 0.0), "4": row(2.5, 30.0)},
            "deadline, no lane": {"1": row(0.7, 0.0), "4": row(1.4, 2.0)},
            "deadline": {"1": row(0.7, 0.0), "4": row(1.0, 0.0)},
        },
        "load": {
            "sessions": 16,
            "messages": 4,
            "fifo": row(10.3, 1.0, 0),
            "deadline, no lane": row(4.2, 0.5, 0),
            "deadline": row(4.0, 0.5, 0),
        },
    }
    table = format_schedule(results)
    assert "| 4 | fifo | 2,500 ms | 2,500 ms | 3.57x | 30.00 s / 30.00 s | 0 of 1 | 2.0 |" in table
    assert "| 4 | deadline, no lane | 1,400 ms | 1,400 ms | 2.00x | 2.00 s / 2.00 s | 0 of 1 | 2.0 |" in table
    assert "| 4 | deadline | 1,000 ms | 1,000 ms | 1.43x | 0.00 s / 0.00 s | 1 of 1 | 2.0 |" in table
    assert "| deadline | 4,000 ms | 4,000 ms | 2.0 |" in table
    assert "16 sessions x 4 messages" in table
