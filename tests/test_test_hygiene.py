"""The README's ``uv run pytest`` collects on a fresh clone, and no test skips around CI.

A fresh clone has the default dependency groups only (``demo`` and ``dev``). A test module that imports an
opt-in package (torch, faster-whisper, jiwer, Playwright, ...) at module level stops the whole run at
collection there, so every module-level import under ``tests/`` must come from the standard library, the
test tree itself, or a distribution the default groups install (``uv export`` of the lock). Opt-in packages
load inside the test through ``optional_groups.require``, the one helper that skips locally and fails
under CI; no test calls ``pytest.skip`` or ``pytest.importorskip`` on its own.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
# The one module allowed to call pytest.skip: it is the helper that turns skips into failures under CI.
SKIP_HELPER = TESTS / "optional_groups.py"
_REQUIREMENT_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


@cache
def default_group_distributions() -> frozenset[str]:
    """Every distribution ``uv sync`` installs without an opt-in group, read from the lock."""
    listing = subprocess.run(
        ["uv", "export", "--frozen", "--no-hashes", "--no-header", "--no-annotate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names: set[str] = set()
    for line in listing.splitlines():
        line = line.strip()
        if line.startswith("-e "):  # a workspace member: its name is in its pyproject.toml
            project = tomllib.loads((ROOT / line[3:].strip() / "pyproject.toml").read_text())["project"]
            names.add(_normalize(project["name"]))
        elif match := _REQUIREMENT_NAME.match(line):
            names.add(_normalize(match.group(1)))
    return frozenset(names)


@cache
def _local_modules() -> frozenset[str]:
    """Names the test tree itself provides (its helper modules and packages; pytest puts them on the path)."""
    return frozenset(p.stem for p in _test_files()) | frozenset(
        p.name for p in TESTS.rglob("*") if p.is_dir() and "__pycache__" not in p.parts
    )


def _import_time_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run when the module is imported: module level, through if/try/with/class bodies."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _import_time_statements(node.body)
            yield from _import_time_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _import_time_statements(block)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _import_time_statements(node.body)


def module_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level module name) of every absolute import that runs when ``path`` is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in _import_time_statements(tree.body):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


@cache
def _installed_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _in_workspace(module: str) -> bool:
    """Whether ``module`` is one of this repository's own packages (an editable workspace member)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return False
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    return origin is not None and origin.is_relative_to(ROOT) and ".venv" not in origin.parts


def import_problem(module: str) -> str | None:
    """Why ``module`` may not be imported at module level on a fresh clone, or None when it may."""
    if module in sys.stdlib_module_names or module in _local_modules():
        return None
    distributions = _installed_distributions().get(module)
    if not distributions and _in_workspace(module):
        return None  # a workspace member's package (installed editable); every member is a default
    if not distributions:
        return "not installed here, so not in the default groups"
    if not {_normalize(d) for d in distributions} & default_group_distributions():
        return f"comes from {', '.join(distributions)}, which only an opt-in group installs"
    return None


def own_skips(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each ``pytest.skip``/``importorskip`` call and ``mark.skip``/``skipif`` in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = ast.unparse(node)
        if name in {"pytest.mark.skip", "pytest.mark.skipif"}:
            found.append((node.lineno, name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in {"pytest.skip", "pytest.importorskip"}:
            found.append((node.lineno, ast.unparse(node.func)))
    return found


def test_no_test_module_imports_an_opt_in_package_at_module_level() -> None:
    problems = [
        f"{path.relative_to(ROOT)}:{line}: import {module}: {why}"
        for path in _test_files()
        for line, module in module_level_imports(path)
        if (why := import_problem(module)) is not None
    ]
    assert not problems, "import these inside the test with optional_groups.require:\n" + "\n".join(problems)


def test_every_skip_goes_through_the_one_helper() -> None:
    problems = [
        f"{path.relative_to(ROOT)}:{line}: {call}"
        for path in _test_files()
        if path != SKIP_HELPER
        for line, call in own_skips(path)
    ]
    assert not problems, "skip through optional_groups.skip_or_fail/require:\n" + "\n".join(problems)


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """The two scanners above flag a module-level opt-in import and a direct skip (and nothing else)."""
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import os\n"
        "import pytest\n"
        "if TYPE_CHECKING:\n"
        "    import torch\n"
        "try:\n"
        "    import jiwer\n"
        "except ImportError:\n"
        "    jiwer = None\n"
        "ort = pytest.importorskip('onnxruntime')\n"
        "@pytest.mark.skipif(True, reason='x')\n"
        "def test_x() -> None:\n"
        "    import playwright\n"
        "    pytest.skip('no')\n"
        "    raise pytest.skip.Exception\n"
    )
    assert [m for _, m in module_level_imports(sample)] == ["__future__", "typing", "os", "pytest", "jiwer"]
    assert sorted(call for _, call in own_skips(sample)) == [
        "pytest.importorskip",
        "pytest.mark.skipif",
        "pytest.skip",
    ]
    assert import_problem("os") is None and import_problem("numpy") is None
    assert import_problem("optional_groups") is None  # the test tree's own helper module
    assert import_problem("no_such_module_anywhere") is not None


def test_the_default_groups_leave_out_the_opt_in_ones() -> None:
    """The lock's default set has the test tools and none of the opt-in groups' own distributions."""
    default = default_group_distributions()
    assert {"pytest", "hypothesis", "numpy", "strands-voice", "kokoro-endpoint"} <= default
    assert not {"torch", "kokoro", "faster-whisper", "jiwer", "playwright"} & default


def test_skipped_tests_are_listed_for_the_second_ci_stage(tmp_path: Path) -> None:
    """A real pytest run lists module-level and fixture skips (not xfails, not passes) in the named file."""
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
        "from skipped_tests import pytest_collectreport, pytest_runtest_logreport\n"
    )
    (tmp_path / "test_gone.py").write_text("import pytest\npytest.skip('gone', allow_module_level=True)\n")
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        "@pytest.fixture\n"
        "def missing():\n"
        "    pytest.skip('missing group')\n"
        "def test_uses_it(missing): pass\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_param(n):\n"
        "    if n == 2: pytest.skip('two')\n"
        "@pytest.mark.xfail(reason='known')\n"
        "def test_known(): assert False\n"
        "def test_ok(): pass\n"
    )
    listing = tmp_path / "skipped.txt"
    env = {**os.environ, "STRANDS_VOICE_SKIPPED_TESTS": str(listing)}
    env.pop("CI", None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert sorted(listing.read_text().splitlines()) == [
        "test_gone.py",
        "test_some.py::test_param[2]",
        "test_some.py::test_uses_it",
    ]


def test_ci_runs_the_readme_path_before_the_full_one() -> None:
    """.ci/run: default groups, the README's `uv run pytest` with CI unset, then every group."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "uv run pytest " in readme or "uv run pytest\n" in readme
    default_sync = script.index("\nuv sync --locked\n")
    readme_run = script.index('(unset CI; STRANDS_VOICE_SKIPPED_TESTS="$skipped" uv run pytest)')
    all_groups = script.index("\nuv sync --locked --all-groups\n")
    second_stage = script.index('uv run pytest "${skipped_tests[@]}"')
    assert default_sync < readme_run < all_groups < second_stage
