"""The scheduling bench's PNG: both panels drawn from a run's results."""

from __future__ import annotations

from pathlib import Path

from strands_voice_tools.bench.schedule import SessionRun, summarize_sessions
from strands_voice_tools.bench.schedule_report import write_schedule_plot


def test_schedule_plot_is_a_png_with_every_configuration(tmp_path: Path) -> None:
    def row(ttfa: float, stall: float) -> dict[str, object]:
        return {**summarize_sessions([SessionRun(ttfa, stall, 5.0)]), "load_average": [[2.0, 1.0, 0.5]]}

    results = {
        "config": {"sessions": [1, 4], "stagger_s": 0.7},
        "machine": {"cpu_model": "test"},
        "staggered": {
            "fifo": {"1": row(0.7, 0.0), "4": row(2.5, 30.0)},
            "deadline": {"1": row(0.7, 0.0), "4": row(1.0, 0.0)},
        },
    }
    data = write_schedule_plot(results, tmp_path / "schedule.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # two panels of bars and values, not an empty canvas
