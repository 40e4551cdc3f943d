"""The house rules a reader relies on, checked over every source tree (tests aside).

No source module over 400 lines, and no function over 60 lines without a docstring that says what it does:
a screen of code is what a reader holds at once. Data tables belong in data files, not in code.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The six source trees (the packages in docs/layout.md).
SOURCE_TREES = (
    ROOT / "protocol" / "strands_voice_protocol",
    ROOT / "strands_voice",
    ROOT / "endpoint" / "kokoro_endpoint",
    ROOT / "cdk",
    ROOT / "examples" / "agentcore_app",
    ROOT / "tools" / "strands_voice_tools",
)
MAX_MODULE_LINES = 400
MAX_UNDOCUMENTED_FUNCTION_LINES = 60


def sources(trees: Iterable[Path] = SOURCE_TREES) -> list[Path]:
    skipped = {".venv", "cdk.out", "node_modules", "__pycache__"}
    return sorted(
        path for tree in trees for path in tree.rglob("*.py") if not skipped.intersection(path.parts)
    )


def long_modules(paths: Iterable[Path]) -> dict[str, int]:
    lengths = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    return {path.name if not path.is_relative_to(ROOT) else str(path.relative_to(ROOT)): n
            for path, n in lengths.items() if n > MAX_MODULE_LINES}  # fmt: skip


def undocumented_long_functions(paths: Iterable[Path]) -> list[str]:
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_UNDOCUMENTED_FUNCTION_LINES and ast.get_docstring(node) is None:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_every_tree_holds_sources() -> None:
    # A moved tree would make every rule below pass on nothing.
    assert all(sources([tree]) for tree in SOURCE_TREES)


def test_no_module_over_400_lines() -> None:
    assert long_modules(sources()) == {}


def test_long_functions_have_docstrings() -> None:
    assert undocumented_long_functions(sources()) == []


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    lines = [f"    x{i} = {i}\n" for i in range(MAX_UNDOCUMENTED_FUNCTION_LINES)]
    body = "".join(lines)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "limit.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (tmp_path / "bare.py").write_text(f"def bare():\n{body}", encoding="utf-8")
    (tmp_path / "told.py").write_text(f'def told():\n    """Says what it does."""\n{body}', encoding="utf-8")
    (tmp_path / "at_limit.py").write_text("def at_limit():\n" + "".join(lines[1:]), encoding="utf-8")
    paths = sources([tmp_path])
    assert long_modules(paths) == {"long.py": MAX_MODULE_LINES + 1}
    assert undocumented_long_functions(paths) == ["bare.py:1 bare (61 lines)"]
