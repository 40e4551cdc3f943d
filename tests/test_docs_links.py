"""The docs are a manual a reader can follow: every relative link in README.md and docs/ points to a file
that exists, and every ``#anchor`` to a heading of that file (GitHub's rule for heading anchors)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``[text](target)``; images too (``![alt](target)``).
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.M)
FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|\*|\[|\]\([^)]*\)", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = anchor(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(paths: list[Path]) -> list[str]:
    broken = []
    for path in paths:
        text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # an outside address: not checked offline
            file_part, _, fragment = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            if not linked.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def manual_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_every_link_and_anchor_in_the_docs_resolves() -> None:
    assert broken_links(manual_pages()) == []


def test_the_check_sees_a_broken_anchor_and_a_missing_file(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## The `VoiceCascade` part (v1.3)\n\n[ok](#the-voicecascade-part-v13)\n[bad](#nowhere)\n"
        "[gone](missing.md)\n```\n[in code](#ignored)\n```\n",
        encoding="utf-8",
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert broken_links([page]) == [
            "page.md: #nowhere (no such heading)",
            "page.md: missing.md (no such file)",
        ]
    finally:
        ROOT = saved
