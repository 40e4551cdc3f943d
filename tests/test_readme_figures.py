"""The README's figures are a recorded run of the current code, rendered from docs/demo.json."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from strands_voice_tools.demo.record import (
    README_BEGIN,
    README_END,
    RECORD_SCHEMA,
    render_readme_figures,
    replace_readme_figures,
)

ROOT = Path(__file__).resolve().parent.parent
# A time or ratio figure: "2.36 s", "480 ms", "2.9x".
FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms)\b|\b\d+(?:\.\d+)?x\b")


def _record() -> dict[str, object]:
    return json.loads((ROOT / "docs" / "demo.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_recorded_run_says_when_where_and_how() -> None:
    record = _record()
    assert record["schema"] == RECORD_SCHEMA
    assert datetime.fromisoformat(str(record["recorded_at"])).tzinfo is not None
    assert str(record["command"]).startswith("uv run strands-voice demo --record")
    machine = record["machine"]
    assert isinstance(machine, dict) and machine["cpu_model"] and machine["cpu_cores"]
    assert machine["load_average_start"] is not None
    modes = record["modes"]
    assert isinstance(modes, dict) and set(modes) == {"bidi", "batch"}
    for figures in modes.values():
        assert 0 < figures["first_text_s"] < figures["first_audio_s"] <= figures["last_audio_s"]
        assert figures["errors"] == [] and figures["audio_s"] > 0


def test_the_readme_block_is_the_rendering_of_the_record() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert render_readme_figures(_record()) in readme


def test_no_time_figure_in_the_readme_outside_the_recorded_block() -> None:
    """Every time or ratio the README quotes comes from the recorded run (the rest live in docs/)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    outside = readme[: readme.index(README_BEGIN)] + readme[readme.index(README_END) :]
    stray = [m.group(0) for m in FIGURE.finditer(outside)]
    # "10 ms above -40 dBFS" defines what "first heard" measures; it is a threshold, not a result.
    assert stray == ["10 ms"], stray


def test_the_block_must_be_there_once() -> None:
    with pytest.raises(ValueError, match="exactly one block"):
        replace_readme_figures("# no block\n", "x")
    twice = f"{README_BEGIN}\n{README_END}\n{README_BEGIN}\n{README_END}\n"
    with pytest.raises(ValueError, match="exactly one block"):
        replace_readme_figures(twice, "x")
    assert replace_readme_figures(f"a\n{README_BEGIN}\nold\n{README_END}\nb", "new") == "a\nnew\nb"
