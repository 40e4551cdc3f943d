"""The README's demo figures: recorded by ``strands-voice demo --record``, rendered from ``docs/demo.json``.

The README quotes the demo's output. So that a quoted figure is always one the current code gave, the
figures live in ``docs/demo.json`` (with the date, the machine and the command that produced them) and the
README's block between :data:`README_BEGIN` and :data:`README_END` is rendered from that file, never typed
by hand. ``uv run strands-voice demo --record`` runs the demo, rewrites both; ``tests/test_readme_figures.py``
checks that the README's block is the rendering of the recorded file.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from strands_voice_tools.demo.report import DemoReport, format_ratio, format_table, report_to_json
from strands_voice_tools.machine import describe_machine, load_average

__all__ = [
    "README_BEGIN",
    "README_END",
    "RECORD_PATH",
    "RECORD_SCHEMA",
    "build_record",
    "render_readme_figures",
    "replace_readme_figures",
    "write_record",
]

RECORD_SCHEMA: Final = "strands-voice-demo/1"
RECORD_PATH: Final = Path("docs") / "demo.json"
README_BEGIN: Final = (
    "<!-- demo-figures: rendered from docs/demo.json by `uv run strands-voice demo --record` -->"
)
README_END: Final = "<!-- /demo-figures -->"
_BLOCK = re.compile(re.escape(README_BEGIN) + r"\n.*?" + re.escape(README_END), re.DOTALL)


def build_record(
    report: DemoReport, command: str, *, started_at: datetime, load_start: Any
) -> dict[str, Any]:
    """The demo's figures with what they depend on: when, on which machine, by which command.

    Args:
        report: The finished demo.
        command: The command line that ran it, as a user would type it.
        started_at: When the demo started (UTC).
        load_start: The load averages when it started (``machine.load_average``).
    """
    machine = describe_machine()
    machine["load_average_start"] = load_start
    machine["load_average_end"] = load_average()
    return {
        "schema": RECORD_SCHEMA,
        "recorded_at": started_at.astimezone(UTC).isoformat(timespec="seconds"),
        "command": command,
        "machine": machine,
        **report_to_json(report),
    }


def render_readme_figures(record: dict[str, Any]) -> str:
    """The README's block (markers included) for a recorded demo: a sentence on the run, then its table."""
    machine = record["machine"]
    when = datetime.fromisoformat(record["recorded_at"]).strftime("%Y-%m-%d %H:%M UTC")
    load = machine.get("load_average_start")
    load_text = f", load average {load[0]:.2f} at the start" if load else ""
    modes = list(record["modes"].values())
    lines = [
        README_BEGIN,
        f"Recorded {when} on {machine['cpu_model']} ({machine['cpu_cores']} cores, no GPU{load_text}) by "
        f"`{record['command']}`; the figures are in [docs/demo.json](docs/demo.json), and the same command "
        "records them again and rewrites this block.",
        "",
        "```text",
        *format_table(modes),
        "",
    ]
    ratio = format_ratio(record["modes"].get("bidi"), record["modes"].get("batch"))
    if ratio:
        lines.append(ratio)
    lines += ["```", README_END]
    return "\n".join(lines)


def replace_readme_figures(readme: str, block: str) -> str:
    """``readme`` with its demo-figures block replaced by ``block``.

    Raises:
        ValueError: The README has no such block (or more than one).
    """
    if len(_BLOCK.findall(readme)) != 1:
        raise ValueError(f"the README needs exactly one block from {README_BEGIN!r} to {README_END!r}")
    return _BLOCK.sub(lambda _match: block, readme)


def write_record(record: dict[str, Any], root: Path) -> Path:
    """Write ``docs/demo.json`` under ``root`` and rewrite the README's block from it; returns the JSON path.

    Raises:
        ValueError: ``root`` is not the repository's root (no README with the block).
        OSError: A file could not be written.
    """
    readme_path = root / "README.md"
    if not readme_path.is_file():
        raise ValueError(f"{root} has no README.md: run --record from the repository's root")
    readme = replace_readme_figures(readme_path.read_text(encoding="utf-8"), render_readme_figures(record))
    path = root / RECORD_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    readme_path.write_text(readme, encoding="utf-8")
    return path
