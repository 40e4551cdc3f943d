"""mypy --strict covers the whole house: .ci/run's Types step and ``[tool.mypy] files`` name every package."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _source_trees() -> set[str]:
    """Top directories of the library and the workspace members (``examples/agentcore_app``: ``examples``)."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    members = pyproject["tool"]["uv"]["workspace"]["members"]
    return {"strands_voice"} | {member.split("/")[0] for member in members}


def test_ci_runs_mypy_strict_on_every_tree() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    calls = [line for line in script.splitlines() if re.match(r"\s*uv run mypy\b", line)]
    assert len(calls) == 1, calls
    words = shlex.split(calls[0])
    assert "--strict" in words
    checked = {word.rstrip("/") for word in words[3:] if not word.startswith("-")}
    assert checked == _source_trees()


def test_mypy_config_files_name_every_tree() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["strict"] is True
    assert set(mypy["files"]) == _source_trees()
