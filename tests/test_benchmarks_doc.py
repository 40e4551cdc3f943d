"""docs/benchmarks.md states figures, not the story of the runs behind them: each figure once, with its
command and its machine, and none of the words a run's notes leave behind ("this run", "not investigated
further", figures that "predate" a fix)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "docs" / "benchmarks.md"
#: What a run's notes say and a page of current figures does not.
RUN_NOTE_WORDS = (
    "this run",
    "that run",
    "today",
    "predate",
    "not investigated",
    "not yet explained",
    "this branch",
    "rerun",
    "re-run",
    "for now",
    "todo",
    "at the time",
)


def run_notes(text: str) -> list[str]:
    """Each line that carries a run-note word, with the word (case aside)."""
    return [
        f"{number}: {word}"
        for number, line in enumerate(text.splitlines(), 1)
        for word in RUN_NOTE_WORDS
        if re.search(rf"\b{re.escape(word)}", line, re.IGNORECASE)
    ]


def test_benchmarks_page_has_no_run_notes() -> None:
    assert run_notes(BENCHMARKS.read_text(encoding="utf-8")) == []


def test_every_section_with_figures_gives_its_command() -> None:
    # A section of figures (a table) opens with the command that produced them.
    sections = re.split(r"^## ", BENCHMARKS.read_text(encoding="utf-8"), flags=re.M)[1:]
    without = [
        s.splitlines()[0] for s in sections if "\n|" in s and "```bash" not in s and "`scripts/" not in s
    ]
    assert without == []


def test_the_check_sees_a_run_note() -> None:
    page = "| figure | 1 ms |\nThis run's 309 ms, not investigated further.\nThe figures Predate the fix.\n"
    assert run_notes(page) == ["2: this run", "2: not investigated", "3: predate"]
