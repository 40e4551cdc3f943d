"""The house rules a reader relies on, checked over every source tree (tests aside).

No source module over 400 lines (the page's JavaScript modules too) and no function body over 60 lines (its
docstring counts): a screen of code is what a reader holds at once. No import cycle inside a package, lazy
(in-function) and type-checking imports included: a reader can read the modules in some order, each after
what it uses. Data tables belong in data files, not in code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
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
MAX_FUNCTION_BODY_LINES = 60
#: A citation of the tracker's numbers (the word, then a number): the tracker is not in the repository.
ISSUE_NUMBER = re.compile(r"\bissues?[ _-]?#?[0-9]+", re.IGNORECASE)


def sources(trees: Iterable[Path] = SOURCE_TREES) -> list[Path]:
    skipped = {".venv", "cdk.out", "node_modules", "__pycache__"}
    return sorted(
        path for tree in trees for path in tree.rglob("*.py") if not skipped.intersection(path.parts)
    )


def page_scripts(trees: Iterable[Path] = SOURCE_TREES) -> list[Path]:
    """The JavaScript the trees ship (the browser page's ES modules): held to the same module size."""
    skipped = {".venv", "cdk.out", "node_modules", "__pycache__"}
    return sorted(
        path for tree in trees for path in tree.rglob("*.js") if not skipped.intersection(path.parts)
    )


def long_modules(paths: Iterable[Path]) -> dict[str, int]:
    lengths = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    return {path.name if not path.is_relative_to(ROOT) else str(path.relative_to(ROOT)): n
            for path, n in lengths.items() if n > MAX_MODULE_LINES}  # fmt: skip


def long_functions(paths: Iterable[Path]) -> list[str]:
    """Every function whose body (docstring included, signature and decorators not) is over the limit."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.body[0].lineno + 1
                if length > MAX_FUNCTION_BODY_LINES:
                    found.append(f"{path.name}:{node.lineno} {node.name} ({length} lines)")
    return found


def issue_numbers(paths: Iterable[Path]) -> list[str]:
    """Every line that cites an issue number."""
    return [
        f"{path.name}:{number}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]


def test_every_tree_holds_sources() -> None:
    # A moved tree would make every rule below pass on nothing.
    assert all(sources([tree]) for tree in SOURCE_TREES)


def test_no_module_over_400_lines() -> None:
    assert long_modules(sources()) == {}


def test_no_page_script_over_400_lines() -> None:
    scripts = page_scripts()
    # The page's scripts moved would make the rule pass on nothing.
    assert any(path.name == "app.js" for path in scripts)
    assert long_modules(scripts) == {}


def test_no_function_body_over_60_lines() -> None:
    assert long_functions(sources()) == []


def test_no_issue_numbers_in_sources_or_tests() -> None:
    tests = sorted(p for p in (ROOT / "tests").rglob("*.py") if "__pycache__" not in p.parts)
    assert issue_numbers([*sources(), *tests]) == []


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    lines = [f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_BODY_LINES)]
    body = "".join(lines)
    (tmp_path / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    (tmp_path / "limit.py").write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    (tmp_path / "bare.py").write_text(f"def bare(\n    a: int,\n) -> None:\n{body}", encoding="utf-8")
    (tmp_path / "told.py").write_text(f'def told():\n    """Says what it does."""\n{body}', encoding="utf-8")
    (tmp_path / "at_limit.py").write_text("@cache\ndef at_limit():\n" + body, encoding="utf-8")
    (tmp_path / "long.js").write_text("x();\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    paths = sources([tmp_path])
    assert long_modules(paths) == {"long.py": MAX_MODULE_LINES + 1}
    assert long_modules(page_scripts([tmp_path])) == {"long.js": MAX_MODULE_LINES + 1}
    assert long_functions(paths) == ["told.py:1 told (61 lines)"]
    cited = tmp_path / "cited.py"
    cited.write_text("# see the tracker\n# fixed in " + "Issue #" + "12\nreissue 3 = 1\n", encoding="utf-8")
    assert issue_numbers([cited]) == ["cited.py:2"]


def module_name(path: Path) -> str:
    """The dotted name ``path`` is imported by: up through every folder that holds an ``__init__.py``."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _imported(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement may load: a module, or a package and its named submodules."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = importer.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, *([base] if base else [])])
    yield base
    yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(paths: Iterable[Path]) -> dict[str, set[str]]:
    """Each module's imports of modules among ``paths``, every import statement counted (lazy ones too).

    Importing ``a.b.c`` also runs ``a/b/__init__.py``: a module's edges include the packages above what it
    imports, except its own packages (already running when it runs).
    """
    files = {module_name(path): path for path in paths}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        graph[name] = edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                package = path.name == "__init__.py"
                for target in _imported(node, name, package):
                    parts = target.split(".")
                    edges.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
        edges.intersection_update(files)
        edges.difference_update(m for m in list(edges) if m == name or name.startswith(m + "."))
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while (member := stack.pop()) != node:
                group.append(member)
            if group:
                cycles.append(sorted([*group, node]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(cycles)


def test_no_import_cycle_inside_a_package() -> None:
    graph = import_graph(sources())
    assert len(graph) > 100  # every tree's modules were read
    assert import_cycles(graph) == []


def test_the_cycle_check_sees_a_planted_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "__init__.py").write_text("from pkg.sub.b import B\n", encoding="utf-8")
    (package / "a.py").write_text("from pkg import c\n", encoding="utf-8")
    (package / "c.py").write_text("def late():\n    from .sub import b\n", encoding="utf-8")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import A\n", encoding="utf-8"
    )
    (package / "free.py").write_text("import pkg.c\n", encoding="utf-8")
    graph = import_graph(sources([tmp_path]))
    assert graph["pkg.c"] == {"pkg.sub", "pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.free"] == {"pkg.c"} and graph["pkg.sub"] == {"pkg.sub.b"}
    assert import_cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub", "pkg.sub.b"]]
    (package / "c.py").write_text("import os\n", encoding="utf-8")  # the cycle broken
    assert import_cycles(import_graph(sources([tmp_path]))) == []
    # Only through a package's __init__: free imports pkg.sub.b, which runs pkg/sub/__init__.py first.
    (package / "sub" / "__init__.py").write_text("from pkg import free\n", encoding="utf-8")
    (package / "free.py").write_text("import pkg.sub.b\n", encoding="utf-8")
    graph = import_graph(sources([tmp_path]))
    assert graph["pkg.free"] == {"pkg.sub", "pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert import_cycles(graph) == [["pkg.free", "pkg.sub"]]


def class_names(trees: Iterable[Path]) -> dict[str, list[str]]:
    """Each class name defined under ``trees``, with the files that define it."""
    found: dict[str, list[str]] = {}
    for path in sources(trees):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                found.setdefault(node.name, []).append(str(shown))
    return found


def test_no_class_name_is_defined_twice_in_any_tree() -> None:
    """One meaning per word: a reader who meets a class name, in any tree, knows which one it is."""
    assert {name: files for name, files in class_names(SOURCE_TREES).items() if len(files) > 1} == {}


def test_the_class_check_sees_a_name_defined_in_two_trees(tmp_path: Path) -> None:
    for tree in ("one", "two"):
        (tmp_path / tree).mkdir()
        (tmp_path / tree / "m.py").write_text("class Close:\n    pass\n", encoding="utf-8")
    found = class_names([tmp_path / "one", tmp_path / "two"])
    assert [len(files) for files in found.values()] == [2]


def glossary_words(layout: str) -> list[str]:
    """The words of the glossary table in docs/layout.md, in order (the first column of each row)."""
    section = layout[layout.index("## Words: one meaning each") :]
    section = section[: section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [row.split("|")[1].strip().lower() for row in rows[1:]]  # the header row aside


def test_each_glossary_word_is_defined_once() -> None:
    words = glossary_words((ROOT / "docs" / "layout.md").read_text(encoding="utf-8"))
    assert len(words) >= 10 and {"turn", "step", "answer", "session", "frame", "bidi"} <= set(words)
    assert sorted(w for w in set(words) if words.count(w) > 1) == []


def test_the_library_top_level_shows_its_concepts() -> None:
    """At most 12 entries: one folder per concept, not a flat list of modules."""
    entries = [p.name for p in (ROOT / "strands_voice").iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 12, sorted(entries)


def crowded_packages(tree: Path, limit: int = 12) -> dict[str, list[str]]:
    """Every package folder under ``tree`` (itself included) with more than ``limit`` entries at its top."""
    found = {}
    for marker in sorted(tree.rglob("__init__.py")):
        entries = sorted(p.name for p in marker.parent.iterdir() if p.name != "__pycache__")
        if len(entries) > limit:
            found[str(marker.parent.relative_to(tree.parent))] = entries
    return found


def test_every_endpoint_package_shows_its_concepts() -> None:
    """At most 12 entries in each of the endpoint's package folders (files, folders and data counted)."""
    assert crowded_packages(ROOT / "endpoint" / "kokoro_endpoint") == {}


def test_the_crowding_check_sees_a_crowded_subpackage(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("", encoding="utf-8")
    for n in range(12):
        (tmp_path / "pkg" / "sub" / f"m{n}.py").write_text("", encoding="utf-8")
    assert list(crowded_packages(tmp_path / "pkg")) == ["pkg/sub"]
    assert crowded_packages(tmp_path / "pkg", limit=13) == {}


def test_endpoint_tests_mirror_the_endpoint_packages() -> None:
    """Each folder of tests/endpoint/ is a package folder of kokoro_endpoint, at the same place."""
    package = ROOT / "endpoint" / "kokoro_endpoint"
    tests = ROOT / "tests" / "endpoint"
    folders = [p.relative_to(tests) for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__"]
    assert folders
    assert [str(f) for f in folders if not (package / f / "__init__.py").is_file()] == []


def test_no_build_output_is_tracked() -> None:
    """Wheels and source archives are built, not committed (``.gitignore`` keeps them out)."""
    import subprocess

    tracked = subprocess.run(
        ["git", "ls-files", "*.whl", "*.tar.gz", "*.egg", "dist/*", "build/*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == []
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"*.whl", "*.tar.gz"} <= set(ignored)
