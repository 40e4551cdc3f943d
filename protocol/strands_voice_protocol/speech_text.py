"""What of a model's text is read aloud: Markdown block markers, and cleaning a chunk for speech (sans-I/O).

:func:`line_marker` classifies a line by its Markdown block marker (heading, list item, block quote,
fence, table row, rule): the streaming chunker ends chunks around block lines, and cleaning drops the
markers. :func:`clean_for_speech` removes what should not be read aloud: heading ``#``, list bullets and
numbers, block quote ``>``, code fences, emphasis ``*``/``_``/``~~``, backticks, link targets
(``[text](url)`` → ``text``), table pipes and separator rows, emoji and pictographs. A bare URL is read as
its host name (``https://docs.example.com/a/b`` → ``docs.example.com``). Every rule works inside one line
and inside one run of non-whitespace, so cleaning chunk by chunk gives the same words as cleaning the whole
text.
"""

from __future__ import annotations

import re
from typing import Final

from strands_voice_protocol.punctuation import CJK_SENTENCE_END

__all__ = ["PLAIN", "clean_chunk", "clean_for_speech", "line_marker"]

#: :func:`line_marker`'s kind for a line that is not a Markdown block line.
PLAIN: Final = "plain"

_MAX_ORDERED_DIGITS: Final = 9
#: The longest run of fence or rule characters read as one marker.
MAX_MARKER_RUN: Final = 64

# Inline cleaning rules, applied in order. None of them matches across whitespace, so they give the same
# result on a whole text and on its whitespace-separated pieces.
_AUTOLINK: Final = re.compile(r"<((?:https?|ftp)://[^\s<>]*)>")
_LINK_TAIL: Final = re.compile(r"\]\([^()\s]*\)")
_IMAGE_BANG: Final = re.compile(r"!\[")
# A URL ends at whitespace or a CJK sentence end (CJK text puts no space after it).
_BARE_URL: Final = re.compile(rf"\b(?:https?|ftp)://([^\s/?#{CJK_SENTENCE_END}]+)[^\s{CJK_SENTENCE_END}]*")
_URL_TRAILING: Final = ".,;:!?)]}\"'”’*_`~"
_HTML_TAG: Final = re.compile(r"</?[A-Za-z][A-Za-z0-9]*/?>")
_EMPHASIS: Final = re.compile(r"\*+|~~+|`+|(?<![^\W_])_+|_+(?![^\W_])")
_BRACKETS: Final = re.compile(r"[\[\]]")
_RULE_RUN: Final = re.compile(r"[-:=]{3,}")
# Only from the start of a whitespace run: retrying at every later position of a long run is quadratic.
_SPACE_BEFORE_PUNCT: Final = re.compile(r"(?<!\s)\s+(?=[.,!?;:…]+(?:\s|$))")
_SYMBOLS: Final = re.compile(
    "["
    "\U0001f000-\U0001faff"  # emoji, pictographs, flags, enclosed alphanumerics
    "\u2600-\u27bf"  # misc symbols, dingbats (✓ ★ ☀ ❤)
    "\u2b00-\u2bff"  # arrows and stars (⭐)
    "\u2190-\u21ff"  # arrows (→)
    "\u2300-\u23ff"  # technical (⌚ ⏰)
    "\u25a0-\u25ff"  # geometric shapes (■ ▶)
    "\u2022\u2023\u2043"  # bullets
    "\ufe0e\ufe0f\u200d\u20e3"  # variation selectors, zero-width joiner, keycap
    "\ud800-\udfff"  # lone surrogates (a broken model stream): unspeakable, and UTF-8 cannot send them
    "|"  # table pipes
    "]"
)


def line_marker(s: str, i: int, final: bool) -> tuple[str, int] | None:
    """Classify the line whose text starts at ``s[i]`` by its Markdown block marker.

    Leading whitespace (not newlines) is skipped. ``"\\n"`` and, when ``final``, the end of ``s`` both end
    the line; otherwise reaching the end of ``s`` before the answer is known returns None (wait for more).

    Returns:
        ``(kind, end)``: kind is ``"plain"`` or the block kind, end the index just past the marker (for a
        plain line, the first non-whitespace character).
    """
    n = len(s)
    while i < n and s[i] != "\n" and s[i].isspace():
        i += 1
    if i >= n:
        return (PLAIN, i) if final else None
    c = s[i]
    if c == "#":
        return _heading(s, i, final)
    if c in "-*+_•":
        return _bullet_or_rule(s, i, final)
    if c.isdigit() and c.isascii():
        return _ordered(s, i, final)
    if c == ">":
        return ("quote", i + 1)
    if c == "|":
        return ("table", i + 1)
    if c in "`~":
        return _fence(s, i, final)
    return (PLAIN, i)


def _peek(s: str, k: int, final: bool) -> str | None:
    """The character at ``k``; ``"\\n"`` past the end of a final text; None when more text is needed."""
    if k < len(s):
        return s[k]
    return "\n" if final else None


def _run_end(s: str, i: int, limit: int) -> int:
    """Just past the run of ``s[i]`` starting at ``i``, counting at most ``limit + 1`` characters."""
    k = i
    while k < len(s) and s[k] == s[i] and k - i <= limit:
        k += 1
    return k


def _heading(s: str, i: int, final: bool) -> tuple[str, int] | None:
    k = _run_end(s, i, 6)
    nxt = _peek(s, k, final)
    if nxt is None:
        return None
    return ("heading", k + 1) if k - i <= 6 and nxt in " \t" else (PLAIN, i)


def _bullet_or_rule(s: str, i: int, final: bool) -> tuple[str, int] | None:
    c = s[i]
    nxt = _peek(s, i + 1, final)
    if nxt is None:
        return None
    if nxt in " \t" and c != "_":
        return ("bullet", i + 2)
    if c in "-*_" and nxt == c:
        k = _run_end(s, i, MAX_MARKER_RUN)
        after = _peek(s, k, final)
        if after is None:
            return None
        if 3 <= k - i <= MAX_MARKER_RUN and after.isspace():
            return ("rule", k)
    return (PLAIN, i)


def _ordered(s: str, i: int, final: bool) -> tuple[str, int] | None:
    k = i
    while k < len(s) and s[k].isdigit() and s[k].isascii() and k - i <= _MAX_ORDERED_DIGITS:
        k += 1
    nxt = _peek(s, k, final)
    if nxt is None:
        return None
    if k - i > _MAX_ORDERED_DIGITS or nxt not in ".)":
        return (PLAIN, i)
    after = _peek(s, k + 1, final)
    if after is None:
        return None
    return ("ordered", k + 2) if after in " \t" else (PLAIN, i)


def _fence(s: str, i: int, final: bool) -> tuple[str, int] | None:
    k = _run_end(s, i, MAX_MARKER_RUN)
    if k == len(s) and not final and k - i <= MAX_MARKER_RUN:
        return None
    return ("fence", k) if 3 <= k - i <= MAX_MARKER_RUN else (PLAIN, i)


def clean_chunk(text: str, starts_line: bool) -> str:
    """:func:`clean_for_speech` for a chunk cut from a stream: its first line's block marker is dropped
    only if the chunk ``starts_line`` (else that line began in an earlier chunk)."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if index or starts_line:
            marker = line_marker(line, 0, True)  # never None when final
            if marker is not None and marker[0] != PLAIN:
                lines[index] = line[marker[1] :]
    out = "\n".join(lines)
    out = _AUTOLINK.sub(r"\1", out)
    out = _LINK_TAIL.sub("", out)
    out = _IMAGE_BANG.sub("[", out)
    out = _BARE_URL.sub(_url_host, out)
    out = _HTML_TAG.sub(" ", out)
    out = _EMPHASIS.sub("", out)
    out = _BRACKETS.sub("", out)
    out = _RULE_RUN.sub("", out)
    out = _SYMBOLS.sub(" ", out)
    out = _SPACE_BEFORE_PUNCT.sub("", out)  # "file 🚀." -> "file."
    return " ".join(out.split())


def _url_host(match: re.Match[str]) -> str:
    url = match.group(0)
    trailing = len(url) - len(url.rstrip(_URL_TRAILING))
    host = match.group(1).rstrip(_URL_TRAILING)
    return host + (url[len(url) - trailing :] if trailing else "")


def clean_for_speech(text: str) -> str:
    """Remove Markdown and symbols that should not be read aloud, and collapse whitespace.

    Args:
        text: Model output (Markdown allowed).

    Returns:
        The text to speak, on one line. Words and punctuation are kept; link targets, markup, bullets and
        emoji are dropped, and a bare URL becomes its host name.
    """
    return clean_chunk(text, starts_line=True)
