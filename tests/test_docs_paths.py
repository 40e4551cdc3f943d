"""Every repository path the docs quote exists: a reader who opens `tests/support/phone.py` finds it.

A span in backticks in README.md or docs/ is read as a path when it has no spaces and either has a ``/``
starting with a name the repository holds (a top-level entry or any folder of the tree: `call/`,
`static/app.js`, `kokoro_endpoint/normalize.py`) or ends in a source or doc extension (`test_exports.py`).
It resolves against the repository root, the page's own folder, or as the tail of a tracked path (so a
package-relative `audio/g711.py` or a bare `conftest.py` is found where it lives); a pytest node id resolves
by its file. Not paths: addresses, routes (a leading ``/``), home folders (``~``), placeholders (``<name>``,
``…``), globs, assignments, media types (`audio/x-mulaw`), and the few files of other projects or of a run's
output that the docs name on purpose (``OUTSIDE``).
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
EXTENSIONS = (".py", ".md", ".json", ".js", ".c", ".cpp", ".sh", ".toml", ".html", ".css", ".txt", ".yml")
#: What marks a span as something other than a path: spaces, addresses, placeholders, globs, options.
NOT_A_PATH = re.compile(r"\s|://|[<>*…?=;:\[\](){}]|\.\.\.|^[/~.-]|^\.\./")
MEDIA_TYPE = re.compile(r"^(audio|application|text|image|video)/[\w.+-]+$")
#: Files the docs name that are not the repository's: other projects' sources, and what a run writes.
OUTSIDE = {
    "g711.c": "the reference G.711 codec the protocol's tables follow",
    "mlas/lib/platform.cpp": "onnxruntime's kernel dispatch",
    "botocore/data/sagemaker/2017-07-24/service-2.json.gz": "botocore's SageMaker service model",
    "config.json": "Kokoro's model configuration, downloaded with the weights",
}


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


def quoted_paths(page: Path) -> list[str]:
    """The spans of ``page`` that read as repository paths (a pytest node id by its file), fences aside."""
    spans = CODE_SPAN.findall(FENCE.sub("", page.read_text(encoding="utf-8")))
    return [path for span in spans if looks_like_a_path(path := span.partition("::")[0])]


def stale_paths(pages: list[Path]) -> list[str]:
    return [
        f"{page.relative_to(ROOT)}: {span}"
        for page in pages
        for span in quoted_paths(page)
        if not resolves(span, page)
    ]


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
    kept = ["tests/test_docs_paths.py", "static/app.js", "conftest.py", "tests/app/", "docs/"]
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
    ]
    assert [span for span in not_paths if looks_like_a_path(span)] == []
    stale = tmp_path / "page.md"
    stale.write_text(
        "See `tests/gone.py::test_x` and `docs/`.\n```\n`inside/a/fence.py`\n```\n", encoding="utf-8"
    )
    assert quoted_paths(stale) == ["tests/gone.py", "docs/"]
