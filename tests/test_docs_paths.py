"""Every repository path the docs quote exists: a reader who opens `tests/support/phone.py` finds it.

A span in backticks in README.md or docs/ is read as a path when it has no spaces and either has a ``/``
starting with a name the repository holds (a top-level entry or any folder of the tree: `call/`,
`static/app.js`, `kokoro_endpoint/normalize.py`) or ends in a source or doc extension (`test_exports.py`).
It resolves against the repository root, the page's own folder, or as the tail of a tracked path (so a
package-relative `audio/g711.py` or a bare `conftest.py` is found where it lives); a pytest node id resolves
by its file. Not paths: addresses, routes (a leading ``/``), home folders (``~``), placeholders (``<name>``,
``…``), globs, assignments, media types (`audio/x-mulaw`), and the few files of other projects or of a run's
output that the docs name on purpose (``OUTSIDE``).

A dotted name that starts with one of the six packages and then names one of its modules
(`strands_voice.session._core.SessionCore`) is a path too: every module in it exists, and the name after the
last module is defined there. A dotted name whose second part is no module is left alone (a metric or span
attribute such as `strands_voice.audio_chunks`, or a name the package exports).
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
EXTENSIONS = (".py", ".md", ".json", ".js", ".c", ".cpp", ".sh", ".toml", ".html", ".css", ".txt", ".yml")
#: What marks a span as something other than a path: spaces, addresses, placeholders, globs, options.
NOT_A_PATH = re.compile(r"\s|://|[<>*…?=;:\[\](){}]|\.\.\.|^[/~-]|^\.\.?/|^\.\w+$")
MEDIA_TYPE = re.compile(r"^(audio|application|text|image|video)/[\w.+-]+$")
#: Files the docs name that are not the repository's: other projects' sources, and what a run writes.
OUTSIDE = {
    "g711.c": "the reference G.711 codec the protocol's tables follow",
    "mlas/lib/platform.cpp": "onnxruntime's kernel dispatch",
    "botocore/data/sagemaker/2017-07-24/service-2.json.gz": "botocore's SageMaker service model",
    "config.json": "Kokoro's model configuration, downloaded with the weights",
}


#: The import name of each package and its folder.
PACKAGES = {
    "strands_voice_protocol": ROOT / "protocol" / "strands_voice_protocol",
    "strands_voice": ROOT / "strands_voice",
    "kokoro_endpoint": ROOT / "endpoint" / "kokoro_endpoint",
    "agentcore_app": ROOT / "examples" / "agentcore_app" / "agentcore_app",
    "strands_voice_tools": ROOT / "tools" / "strands_voice_tools",
    "strands_voice_infra": ROOT / "cdk" / "strands_voice_infra",
}
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.\w+)+$")


@cache
def tracked() -> tuple[frozenset[str], frozenset[str]]:
    """The tracked files and every folder above them, as repository-relative POSIX paths."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    files = frozenset(path for path in listing if (ROOT / path).exists())
    folders = frozenset(str(parent) for path in files for parent in Path(path).parents if str(parent) != ".")
    return files, folders


def looks_like_a_path(span: str) -> bool:
    if NOT_A_PATH.search(span) or MEDIA_TYPE.match(span) or span in OUTSIDE:
        return False
    if "/" in span:
        _, folders = tracked()
        names = {Path(folder).name for folder in folders} | {entry.name for entry in ROOT.iterdir()}
        return span.split("/")[0] in names
    return span.endswith(EXTENSIONS)


def resolves(span: str, page: Path) -> bool:
    files, folders = tracked()
    path = span.rstrip("/")
    # A module may be named without its extension (`lambda_src/hf_snapshot_to_s3`).
    named = (path, path + ".py")
    if any((ROOT / name).exists() or (page.parent / name).exists() for name in named):
        return True
    return any(
        entry in named or entry.endswith(tuple("/" + name for name in named)) for entry in files | folders
    )


def module_file(folder: Path, name: str) -> Path | None:
    """The file that defines module ``name`` of the package in ``folder`` (its ``__init__.py`` or source)."""
    for path in (folder / name / "__init__.py", folder / f"{name}.py"):
        if path.is_file():
            return path
    return None


@cache
def defined_names(path: Path) -> frozenset[str]:
    """Every name a module binds anywhere (classes, functions, assignments, imports): what a doc may cite."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return frozenset(found)


def stale_dotted_name(span: str) -> bool:
    """A module path that names a module or a module's name that does not exist (see the module docstring)."""
    parts = span.split(".")
    folder = PACKAGES.get(parts[0])
    if folder is None or not DOTTED.match(span):
        return False
    if module_file(folder, parts[1]) is None and not parts[1].startswith("_"):
        return False
    path, index = folder / "__init__.py", 1
    while index < len(parts) and (found := module_file(folder, parts[index])):
        path, index = found, index + 1
        if found.name != "__init__.py":
            break
        folder = found.parent
    return index < len(parts) and parts[index] not in defined_names(path)


def quoted_paths(page: Path) -> list[str]:
    """The spans of ``page`` that read as repository paths (a pytest node id by its file), fences aside."""
    spans = CODE_SPAN.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
    return [path for span in spans if looks_like_a_path(path := span.partition("::")[0])]


def stale_paths(pages: list[Path]) -> list[str]:
    stale = []
    for page in pages:
        spans = CODE_SPAN.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
        missing = [span for span in quoted_paths(page) if not resolves(span, page)]
        missing += [span for span in spans if stale_dotted_name(span)]
        stale += [f"{page.relative_to(ROOT)}: {span}" for span in missing]
    return stale


def manual_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_path_quoted_in_the_docs_exists() -> None:
    assert stale_paths(manual_pages()) == []


def test_the_outside_names_are_not_the_repository_s() -> None:
    # A name listed as another project's that the repository holds would hide a stale path of its own.
    files, folders = tracked()
    assert [
        name for name in OUTSIDE if any(p == name or p.endswith("/" + name) for p in files | folders)
    ] == []


def test_the_check_sees_a_stale_path_and_passes_what_is_not_a_path(tmp_path: Path) -> None:
    page = ROOT / "docs" / "layout.md"
    kept = ["tests/test_docs_paths.py", "static/app.js", "conftest.py", "tests/app/", "docs/", ".ci/run"]
    assert all(looks_like_a_path(span) and resolves(span, page) for span in kept)
    gone = ["tests/test_no_such_check.py", "strands_voice/no_such_module.py", "no_such_page.md"]
    assert [span for span in gone if looks_like_a_path(span) and not resolves(span, page)] == gone
    not_paths = [
        "/ws",
        "http://127.0.0.1:8000",
        "models/<model>/*",
        "audio/x-mulaw",
        "km/h",
        "~/.cache/x",
        "uv run pytest tests/app",
        "KOKORO_LEXICON=/path/lexicon.json",
        "static/…",
        "1/2",
        "../x",
        ".py",
    ]
    assert [span for span in not_paths if looks_like_a_path(span)] == []
    stale = tmp_path / "page.md"
    stale.write_text(
        "See `tests/gone.py::test_x` and `docs/`.\n```\n`inside/a/fence.py`\n```\n", encoding="utf-8"
    )
    assert quoted_paths(stale) == ["tests/gone.py", "docs/"]


def test_the_check_sees_a_stale_module_path() -> None:
    kept = ["strands_voice.session._core.SessionCore", "strands_voice_protocol.limits.KEEPALIVE_S",
            "strands_voice.turns", "strands_voice.audio_chunks", "agentcore_app.call.CallLimits"]  # fmt: skip
    assert [span for span in kept if stale_dotted_name(span)] == []
    gone = ["strands_voice.session._no_such_core", "strands_voice.session._core.NoSuchClass",
            "strands_voice_protocol.audio.no_such_codec", "agentcore_app.call._socket.NoSuch"]  # fmt: skip
    assert [span for span in gone if stale_dotted_name(span)] == gone
