"""docs/layout.md is the map of the house: every module of every package is named in its package's section.

Also the docs' own layout: benchmark figures live under ``docs/benchmarks/`` (named by what they measure),
every figure a page cites exists, and every file there is cited (one current artifact per question).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LAYOUT = DOCS / "layout.md"

#: Each package's tree and the headings its section of layout.md runs between.
SECTIONS = {
    "protocol/strands_voice_protocol": ("### `strands_voice_protocol`", "### `strands_voice`: the library"),
    "strands_voice": ("### `strands_voice`: the library", "### `kokoro_endpoint`"),
    "endpoint/kokoro_endpoint": ("### `kokoro_endpoint`", "### `agentcore_app`"),
    "examples/agentcore_app/agentcore_app": ("### `agentcore_app`", "## The tests"),
    "tools/strands_voice_tools": ("### `agentcore_app`", "## The tests"),
    "cdk/strands_voice_infra": ("### `agentcore_app`", "## The tests"),
}
#: The most JSON/PNG files docs/ may hold at its top level (the README's recorded demo figures).
MAX_TOP_LEVEL_FIGURES = 2
#: The most files docs/benchmarks/ may hold: each question's current artifacts.
MAX_BENCHMARK_FILES = 16


def named_in(text: str) -> set[str]:
    """Every word inside backticks in ``text``, a leading underscore dropped (a private module is named
    by its name)."""
    return {
        word.lstrip("_") for quoted in re.findall(r"`([^`]+)`", text) for word in re.split(r"\W+", quoted)
    }


def unlisted_modules(tree: Path, section: str) -> list[str]:
    """The modules under ``tree`` that ``section`` does not name (package markers aside)."""
    names = named_in(section)
    return [
        str(path.relative_to(tree))
        for path in sorted(tree.rglob("*.py"))
        if "__pycache__" not in path.parts
        and path.name not in {"__init__.py", "__main__.py"}
        and path.stem.lstrip("_") not in names
    ]


def section_of(text: str, start: str, end: str) -> str:
    begin = text.index(start)
    return text[begin : text.index(end, begin + len(start))]


def test_layout_names_every_module_in_its_package_section() -> None:
    text = LAYOUT.read_text(encoding="utf-8")
    missing = {
        tree: unlisted_modules(ROOT / tree, section_of(text, start, end))
        for tree, (start, end) in SECTIONS.items()
    }
    assert {tree: modules for tree, modules in missing.items() if modules} == {}


def test_the_layout_check_sees_an_unlisted_module(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "listed.py", "_private.py", "sub/__init__.py", "sub/deep.py", "forgotten.py"):
        (package / name).write_text("", encoding="utf-8")
    section = "| `listed` | one |\n| `private` (`sub.deep`) | two |\nforgotten, unquoted\n"
    assert unlisted_modules(package, section) == ["forgotten.py"]


def test_docs_keep_benchmark_figures_under_docs_benchmarks() -> None:
    top_level = sorted(p.name for p in DOCS.iterdir() if p.suffix in {".json", ".png"})
    assert len(top_level) <= MAX_TOP_LEVEL_FIGURES, top_level
    assert any((DOCS / "benchmarks").glob("*.json"))


def cited_figures() -> set[str]:
    """The file names under ``docs/benchmarks/`` that the docs' pages cite."""
    return {
        name
        for page in DOCS.glob("*.md")
        for name in re.findall(r"\bbenchmarks/(\w+\.(?:json|png))\b", page.read_text(encoding="utf-8"))
    }


def test_every_benchmark_figure_the_docs_cite_exists() -> None:
    cited = cited_figures()
    assert cited
    assert sorted(name for name in cited if not (DOCS / "benchmarks" / name).exists()) == []


def test_docs_benchmarks_keeps_one_cited_artifact_per_question() -> None:
    kept = sorted(path.name for path in (DOCS / "benchmarks").iterdir())
    assert len(kept) <= MAX_BENCHMARK_FILES, kept
    assert sorted(set(kept) - cited_figures()) == []
