"""Incremental sentence chunking of streamed LLM text for TTS (sans-I/O).

:class:`IncrementalSentenceChunker` takes text deltas as they stream from the model and hands back
chunks ready to speak: whole sentences (or, for the very first chunk, a clause, so speech starts sooner),
never longer than ``max_chunk_chars``, cleaned of Markdown and symbols a voice should not read.

How it decides, in short:

* A sentence ends at ``.``, ``!``, ``?`` or ``…`` (runs like ``?!`` and ``...`` count as one), plus any
  closing quotes, brackets or Markdown emphasis after it, when whitespace and then a word that does not
  start with a lowercase letter follow. So decimals, versions, times, URLs, e-mail addresses and file
  names (no whitespace after the dot), and common abbreviations and initials (``Mr.``, ``e.g.``,
  ``U.S.``, ``J. R. R. Tolkien``) do not end a sentence.
* CJK terminators (``。！？``) end a sentence with no space after them, except inside a quotation the
  sentence goes on from: ``「はい。」と言った。`` (a closing bracket, then hiragana) is one sentence.
* A blank line ends a chunk, and so does a newline before or after a Markdown block line (heading, list
  item, block quote, fence, table row, rule).
* The first chunk of a stream is split at a clause boundary (``,`` ``;`` ``:`` ``—`` ``–`` followed by a
  space, or ``，、；：``) once it is ``first_chunk_min_chars`` long. With ``first_chunk_max_chars``
  set, a first chunk with no such boundary is cut at the first space at or past that many characters
  (not right after a dot, which may be an abbreviation), so a long unpunctuated first sentence does not
  hold back speech until it has all arrived. Any chunk that would exceed
  ``max_chunk_chars`` is split at its last clause boundary (if it is past the middle), else at its last
  whitespace, else hard.

Every decision looks at a bounded stretch of text ahead; the chunker waits until that text has arrived
(or :meth:`~IncrementalSentenceChunker.flush` says the stream ended). So the chunks never depend on how
the text was fragmented. The stretch is at most about ``max_chunk_chars``, however long a run of the same
character grows (a model can emit thousands of dots or blanks):

* A run of terminators (and closing marks) that reaches ``max_chunk_chars`` past the chunk start cannot
  end that chunk, so the chunk is cut at its limit without waiting for the run to end.
* A blank of more than ``max_chunk_chars`` characters after a sentence terminator ends the sentence, and
  one after a newline ends the chunk (as a blank line does), whatever follows it.

An undecided lookahead resumes where it stopped on the next feed, and blanks with nothing to speak before
them are dropped as they pass, so each character is scanned a bounded number of times and the buffer
stays short: time is O(n) however the text is fragmented.

:func:`sentence_ends` and :func:`split_sentences` apply the same sentence rule to a whole text (for batch
mode, the TTS endpoint and the scripted stand-in model); a property test checks they find the chunks the
streaming chunker finds on plain text.

:func:`clean_for_speech` removes what should not be read aloud: heading ``#``, list bullets and numbers,
block quote ``>``, code fences, emphasis ``*``/``_``/``~~``, backticks, link targets (``[text](url)`` →
``text``), table pipes and separator rows, emoji and pictographs. A bare URL is read as its host name
(``https://docs.example.com/a/b`` → ``docs.example.com``). Every rule works inside one line and inside
one run of non-whitespace, so cleaning chunk by chunk gives the same words as cleaning the whole text.
"""

from __future__ import annotations

import itertools
import re
from typing import Final

from strands_voice_protocol.errors import ConfigurationError

__all__ = [
    "ABBREVIATIONS",
    "IncrementalSentenceChunker",
    "clean_for_speech",
    "ends_with_abbreviation",
    "sentence_ends",
    "split_sentences",
]

#: Lowercase words that a following ``.`` does not end a sentence after (the dot itself excluded).
ABBREVIATIONS: Final[frozenset[str]] = frozenset(
    {
        # titles and names
        "mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon", "gen", "col",
        "capt", "lt", "sgt", "gov", "sen", "rep", "pres", "messrs",
        # latin and editorial
        "e.g", "i.e", "eg", "ie", "etc", "vs", "cf", "al", "approx", "ca", "viz", "ibid", "op",
        "fig", "figs", "vol", "vols", "pp", "ch", "sec", "eq", "ed", "eds", "ref", "dept", "est",
        # companies and places
        "inc", "ltd", "co", "corp", "llc", "bros", "ave", "blvd", "rd", "ft",
        # months and days (only the unambiguous ones; "sun", "sat", "wed", "mar" are words)
        "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        "mon", "tue", "tues", "thu", "thur", "thurs", "fri",
        # multi-dot forms whose dotted-acronym shape does not catch them
        "ph.d", "ret",
    }
)  # fmt: skip

_TERMINATORS: Final = ".!?…。！？"
_CJK_TERMINATORS: Final = "。！？"
# Closing marks that stay with the sentence they close. No "]" after CJK: a "](url)" link tail must stay
# whole for cleaning, and CJK ends a sentence with no space, so "。](url)" would otherwise be split.
_CLOSERS: Final = "\"'”’»)]}*_`~"
_CJK_CLOSERS: Final = "」』）】》〕〉\"'”’»)}*_`~"
_CLAUSE: Final = ",;:—–"  # a clause boundary when whitespace follows
_CJK_CLAUSE: Final = "，、；："  # a clause boundary right away
_TOKEN_OPENERS: Final = "\"'“‘([{*_`~"
_ABBREV_LOOKBACK: Final = 32
_MAX_ORDERED_DIGITS: Final = 9
_MAX_MARKER_RUN: Final = 64
_FEED_PIECE_CHARS: Final = 4096
_DOTTED_ACRONYM: Final = re.compile(r"(?:[a-z]\.)+[a-z]")

_PLAIN: Final = "plain"

# Inline cleaning rules, applied in order. None of them matches across whitespace, so they give the same
# result on a whole text and on its whitespace-separated pieces.
_AUTOLINK: Final = re.compile(r"<((?:https?|ftp)://[^\s<>]*)>")
_LINK_TAIL: Final = re.compile(r"\]\([^()\s]*\)")
_IMAGE_BANG: Final = re.compile(r"!\[")
_BARE_URL: Final = re.compile(r"\b(?:https?|ftp)://([^\s/?#。！？]+)[^\s。！？]*")
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


def _line_marker(s: str, i: int, final: bool) -> tuple[str, int] | None:
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
        return (_PLAIN, i) if final else None

    def peek(k: int) -> str | None:
        # The character at k; "\n" past the end of a final text; None when more text is needed.
        if k < n:
            return s[k]
        return "\n" if final else None

    c = s[i]
    if c == "#":
        k = i
        while k < n and s[k] == "#" and k - i <= 6:
            k += 1
        nxt = peek(k)
        if nxt is None:
            return None
        if k - i <= 6 and nxt in " \t":
            return ("heading", k + 1)
        return (_PLAIN, i)
    if c in "-*+_•":
        nxt = peek(i + 1)
        if nxt is None:
            return None
        if nxt in " \t" and c != "_":
            return ("bullet", i + 2)
        if c in "-*_" and nxt == c:
            k = i
            while k < n and s[k] == c and k - i <= _MAX_MARKER_RUN:
                k += 1
            after = peek(k)
            if after is None:
                return None
            if 3 <= k - i <= _MAX_MARKER_RUN and after.isspace():
                return ("rule", k)
        return (_PLAIN, i)
    if c.isdigit() and c.isascii():
        k = i
        while k < n and s[k].isdigit() and s[k].isascii() and k - i <= _MAX_ORDERED_DIGITS:
            k += 1
        nxt = peek(k)
        if nxt is None:
            return None
        if k - i > _MAX_ORDERED_DIGITS or nxt not in ".)":
            return (_PLAIN, i)
        after = peek(k + 1)
        if after is None:
            return None
        if after in " \t":
            return ("ordered", k + 2)
        return (_PLAIN, i)
    if c == ">":
        return ("quote", i + 1)
    if c == "|":
        return ("table", i + 1)
    if c in "`~":
        k = i
        while k < n and s[k] == c and k - i <= _MAX_MARKER_RUN:
            k += 1
        if k == n and not final and k - i <= _MAX_MARKER_RUN:
            return None
        if 3 <= k - i <= _MAX_MARKER_RUN:
            return ("fence", k)
        return (_PLAIN, i)
    return (_PLAIN, i)


def _is_abbreviation(s: str, dot: int, next_char: str, lo: int = 0) -> bool:
    """Whether the word before the ``.`` at ``s[dot]`` is an abbreviation or an initial.

    ``s[lo]`` starts the current chunk (or sentence): the word starts there at the earliest.
    """
    start = dot
    limit = max(lo, dot - _ABBREV_LOOKBACK)
    while start > limit and not s[start - 1].isspace():
        start -= 1
    if start == limit and start > lo and not s[start - 1].isspace():
        return False  # a very long token: not an abbreviation
    token = s[start:dot].lstrip(_TOKEN_OPENERS)
    if not token:
        return False
    low = token.lower()
    if low == "no":
        return next_char.isdigit()  # "No. 5", but "The answer is no. Then ..."
    if low in ABBREVIATIONS or _DOTTED_ACRONYM.fullmatch(low):
        return True
    return len(token) == 1 and token.isalpha() and token.isupper() and token != "I"


def ends_with_abbreviation(text: str, next_char: str = "") -> bool:
    """Whether ``text`` ends with a ``.`` that closes an abbreviation or an initial, not a sentence.

    The same rule the chunker applies (``Dr.``, ``e.g.``, ``approx.``, ``J.``, ``U.S.``; ``No.`` only
    before a digit), for code that splits whole texts into sentences, such as the TTS endpoint.

    Args:
        text: Text up to and including the dot (trailing whitespace is ignored).
        next_char: The first character after the whitespace that follows the dot, when known.

    Returns:
        True when the text does not end a sentence at its final dot.
    """
    stripped = text.rstrip()
    if not stripped.endswith("."):
        return False
    return _is_abbreviation(stripped, len(stripped) - 1, next_char)


def _quote_continues(s: str, term_end: int, end: int) -> bool:
    """Whether the CJK terminators ending at ``s[term_end]`` close a quotation the sentence goes on from:
    closing marks follow them (``s[term_end:end]``), then hiragana (``「はい。」と言った``)."""
    return term_end < end < len(s) and "\u3041" <= s[end] <= "\u309f"


def _ends_before(
    s: str, i: int, term_end: int, next_char: str, lo: int = 0, *, lowercase_continues: bool = True
) -> bool:
    """Whether the terminators ``s[i:term_end]``, then closing marks and whitespace, end a sentence
    before ``next_char`` (the first character after the whitespace); ``s[lo]`` starts the sentence."""
    if lowercase_continues and next_char.islower():
        return False  # "approx. five", "Wait... what", '"Really?" she asked'
    return not (term_end == i + 1 and s[i] == "." and _is_abbreviation(s, i, next_char, lo))


def sentence_ends(text: str, *, lowercase_continues: bool = True) -> list[int]:
    """Where the chunker's sentence rule ends sentences in a whole text.

    The rule of :class:`IncrementalSentenceChunker` (see the module docstring), for code that has the
    whole text at once, such as the TTS endpoint or batch mode: a run of ``.!?…`` plus closing marks ends
    a sentence that has a letter or digit when whitespace and then a character that is not a lowercase
    letter follow, and not after an abbreviation or an initial; a CJK terminator ends one right away.
    The end of the text is not listed. Unlike the chunker, nothing else ends a sentence here (no line
    or Markdown block rules, no length limit).

    Args:
        text: A complete text.
        lowercase_continues: True (the chunker's rule): a lowercase word after the terminators continues
            the sentence (``"Wait... what"``). False ends the sentence there too, for text written
            without capitals (the TTS endpoint reads whatever a client sends).

    Returns:
        Each end's index just past its terminators and closing marks, in order.
    """
    ends: list[int] = []
    n = len(text)
    start = 0  # where the current sentence starts
    has_word = False
    i = 0
    while i < n:
        if text[i] not in _TERMINATORS:
            has_word = has_word or text[i].isalnum()
            i += 1
            continue
        j = i
        while j < n and text[j] in _TERMINATORS:
            j += 1
        term_end = j
        cjk = any(ch in _CJK_TERMINATORS for ch in text[i:term_end])
        closers = _CJK_CLOSERS if cjk else _CLOSERS
        while j < n and text[j] in closers:
            j += 1
        k = j
        while k < n and text[k].isspace():
            k += 1
        if cjk:
            ends_here = not _quote_continues(text, term_end, j)
        else:
            ends_here = (
                k > j
                and k < n
                and _ends_before(text, i, term_end, text[k], start, lowercase_continues=lowercase_continues)
            )
        if j < n and has_word and ends_here:
            ends.append(j)
            start, has_word = j, False
        i = j
    return ends


def split_sentences(text: str, *, lowercase_continues: bool = True) -> list[str]:
    """Split a whole text into sentences at :func:`sentence_ends` (whitespace-trimmed, blank ones dropped).

    Args:
        text: A complete text.
        lowercase_continues: As for :func:`sentence_ends`.

    Returns:
        The sentences in order; ``[]`` when the text is blank.
    """
    bounds = [0, *sentence_ends(text, lowercase_continues=lowercase_continues), len(text)]
    pieces = (text[start:end].strip() for start, end in itertools.pairwise(bounds))
    return [piece for piece in pieces if piece]


def _clean_chunk(text: str, starts_line: bool) -> str:
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if index or starts_line:
            marker = _line_marker(line, 0, True)  # never None when final
            if marker is not None and marker[0] != _PLAIN:
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
    return _clean_chunk(text, starts_line=True)


class IncrementalSentenceChunker:
    """Split streamed text into speakable chunks as early as it safely can.

    Example:
        >>> chunker = IncrementalSentenceChunker()
        >>> chunker.feed("Hello there. How")
        ['Hello there.']
        >>> chunker.feed(" are you?")
        []
        >>> chunker.flush()
        'How are you?'

    Args:
        first_chunk_min_chars: Split the first chunk of the stream at the first clause boundary at or past
            this many characters, so speech starts sooner. None turns it off.
        max_chunk_chars: No chunk is longer than this (Kokoro speaks 510 phonemes in one window; 350
            characters is a safe bound). At least 20.
        first_chunk_max_chars: Cut the first chunk of the stream at the first space at or past this many
            characters when no sentence or clause boundary came first. None (the default) never forces
            a cut between words: see docs/benchmarks.md (first fragment) for the measurements.
    """

    def __init__(
        self,
        first_chunk_min_chars: int | None = 40,
        max_chunk_chars: int = 350,
        first_chunk_max_chars: int | None = None,
    ) -> None:
        if max_chunk_chars < 20:
            raise ConfigurationError("max_chunk_chars must be at least 20")
        if first_chunk_min_chars is not None and first_chunk_min_chars < 1:
            raise ConfigurationError("first_chunk_min_chars must be positive or None")
        if first_chunk_max_chars is not None and first_chunk_max_chars < 1:
            raise ConfigurationError("first_chunk_max_chars must be positive or None")
        self.first_chunk_max_chars = first_chunk_max_chars
        self.first_chunk_min_chars = first_chunk_min_chars
        self.max_chunk_chars = max_chunk_chars
        self._reset()

    def _reset(self) -> None:
        self._buf = ""  # text not yet handed out; starts at the current chunk
        self._pos = 0  # scan position in _buf: everything before it is decided
        self._need_line = True  # the line at _pos still needs its block marker classified
        self._line_block = False  # the line being scanned is a Markdown block line
        self._starts_line = True  # the current chunk starts at the beginning of a line
        self._start = -1  # index of the chunk's first non-whitespace character, -1 if none yet
        self._has_word = False  # the chunk has a letter or digit outside block markers
        self._last_space = -1  # last whitespace index in the chunk (a cut position)
        self._last_clause = -1  # cut position just after the last clause boundary
        self._emitted = 0
        self._clear_lookahead()

    def _clear_lookahead(self) -> None:
        # How far an undecided lookahead got, so the next feed resumes there instead of rescanning a long
        # run from its start. Each is tied to the index in _buf of the terminator or newline it decides
        # (-1: none); a cut shifts _buf and clears them.
        self._run_at = -1  # the terminator run being decided
        self._run_scan = 0  # next index of it to look at
        self._run_term_end = -1  # end of the terminators, once known
        self._run_end = -1  # end of the terminators and closing marks, once known
        self._run_cjk = False  # the run has a CJK terminator
        self._newline_at = -1  # the newline being decided
        self._newline_scan = 0  # next index of the blank run after it to look at
        self._newline_blank = False  # that blank run holds another newline

    @property
    def chunks_emitted(self) -> int:
        """How many non-empty chunks this chunker has handed out since it was created or flushed."""
        return self._emitted

    def feed(self, fragment: str) -> list[str]:
        """Add streamed text; return the chunks it completed (often none), cleaned for speech."""
        out: list[str] = []
        # A big fragment goes in by pieces so each cut slices a short buffer, not the rest of the fragment
        # (quadratic on a long document); the chunks never depend on how the text was fragmented.
        for at in range(0, len(fragment), _FEED_PIECE_CHARS):
            self._buf += fragment[at : at + _FEED_PIECE_CHARS]
            out += self._scan(final=False)
        return out

    def finish(self) -> list[str]:
        """End the stream: return every remaining chunk (usually one, or none) and reset for reuse."""
        out = self._scan(final=True)
        self._cut(len(self._buf), len(self._buf), out)
        self._reset()
        return out

    def flush(self) -> str | None:
        """End the stream: return the remaining text as one chunk (None if nothing is left to speak).

        In rare cases the end of the stream settles a boundary that was waiting for more text (for
        example a blank line then ``1``, which could have become a list item); :meth:`finish` keeps
        those chunks apart, ``flush`` joins them with a space.
        """
        chunks = self.finish()
        return " ".join(chunks) if chunks else None

    def _cut(self, end: int, next_start: int, out: list[str], starts_line: bool = False) -> None:
        """Hand out ``_buf[:end]`` as a chunk; the next chunk starts at ``_buf[next_start:]``."""
        text = _clean_chunk(self._buf[:end], self._starts_line)
        if text:
            out.append(text)
            self._emitted += 1
        self._buf = self._buf[next_start:]
        self._pos = 0
        self._starts_line = starts_line
        self._start = -1
        self._has_word = False
        self._last_space = -1
        self._last_clause = -1
        self._clear_lookahead()

    def _max_cut(self) -> int:
        if self._last_clause > self._start and self._last_clause >= self._start + self.max_chunk_chars // 2:
            return self._last_clause
        if self._last_space > self._start:
            return self._last_space
        return self._start + self.max_chunk_chars

    def _first_clause_ready(self, cut: int) -> bool:
        return (
            self.first_chunk_min_chars is not None
            and self._emitted == 0
            and self._has_word
            and cut - self._start >= self.first_chunk_min_chars
        )

    def _scan(self, final: bool) -> list[str]:
        out: list[str] = []
        i = self._pos
        while True:
            buf = self._buf
            if self._start >= 0 and i - self._start >= self.max_chunk_chars:
                cut = self._max_cut()
                self._cut(cut, cut, out)
                i = 0
                continue
            if i >= len(buf):
                break
            ch = buf[i]
            if self._start < 0 and i >= self.max_chunk_chars and ch.isspace():
                # Only blanks and block markers so far, nothing to speak: drop them, so a long blank run
                # does not grow the buffer. The text after is mid-line unless its line is still unclassified.
                self._cut(i, i, out, starts_line=self._need_line)
                i = 0
                continue
            if self._need_line:
                if ch != "\n" and ch.isspace():
                    i += 1  # one by one, so a long indent is scanned once
                    continue
                marker = _line_marker(buf, i, final)
                if marker is None:
                    break
                self._line_block = marker[0] != _PLAIN
                self._need_line = False
                i = marker[1]
                continue
            if ch.isspace():
                if i > 0 and buf[i - 1] in _CLAUSE and self._start >= 0:
                    self._last_clause = i
                    if self._first_clause_ready(i):
                        self._cut(i, i, out)
                        i = 0
                        continue
                if (
                    self.first_chunk_max_chars is not None
                    and self._emitted == 0
                    and self._has_word
                    and self._start >= 0
                    and i - self._start >= self.first_chunk_max_chars
                    and buf[i - 1] not in _TERMINATORS
                    and not buf[i - 1].isspace()
                ):
                    self._cut(i, i, out)
                    i = 0
                    continue
                if ch == "\n":
                    decision = self._newline(buf, i, final)
                    if decision is None:
                        break
                    self._newline_at = -1
                    brk, next_block, line_start, marker_end = decision
                    if line_start < 0:
                        # A long blank run after the newline: end the chunk here, whatever it holds, drop the
                        # run scanned so far and classify the next line when it comes.
                        self._cut(i, marker_end, out, starts_line=True)
                        self._need_line = True
                        i = 0
                        continue
                    if brk and self._has_word:
                        self._cut(i, line_start, out, starts_line=True)
                        i = marker_end - line_start
                    else:
                        self._last_space = i
                        i = marker_end
                    self._line_block = next_block
                    continue
                self._last_space = i
                i += 1
                continue
            if self._start < 0:
                self._start = i
            if ch in _TERMINATORS:
                ended = self._sentence_end(buf, i, final)
                if ended is None:
                    break
                self._run_at = -1
                ends, end = ended
                if ends and self._has_word and end - self._start <= self.max_chunk_chars:
                    self._cut(end, end, out)
                    i = 0
                else:
                    i = end
                continue
            if ch in _CJK_CLAUSE:
                self._last_clause = i + 1
                if self._first_clause_ready(i + 1):
                    self._cut(i + 1, i + 1, out)
                    i = 0
                    continue
            elif ch.isalnum():
                self._has_word = True
            i += 1
        self._pos = i
        return out

    def _sentence_end(self, s: str, i: int, final: bool) -> tuple[bool, int] | None:
        """Decide whether the terminator run starting at ``s[i]`` ends a sentence.

        A call for the same run resumes where the last one stopped, so a long run is scanned once. Past
        ``max_chunk_chars`` from the chunk start the rest of the run does not matter: a run that reaches
        there cannot end a chunk that short (the caller cuts the chunk at its limit). And a blank of more
        than ``max_chunk_chars`` after the run ends the sentence, whatever follows it.

        Returns:
            ``(ends, end)`` with ``end`` just past the terminators and closing marks (or, for a run too
            long to end the chunk, just past the limit), or None to wait for more.
        """
        n = len(s)
        limit = self._start + self.max_chunk_chars
        if self._run_at != i:
            self._run_at, self._run_scan, self._run_term_end, self._run_end = i, i, -1, -1
            self._run_cjk = False
        j = self._run_scan
        if self._run_term_end < 0:
            while j < n and s[j] in _TERMINATORS:
                self._run_cjk = self._run_cjk or s[j] in _CJK_TERMINATORS
                j += 1
                if j > limit:
                    return (False, j)
            if j == n and not final:
                self._run_scan = j
                return None
            self._run_term_end = j
        cjk = self._run_cjk
        if self._run_end < 0:
            closers = _CJK_CLOSERS if cjk else _CLOSERS
            while j < n and s[j] in closers:
                j += 1
                if j > limit:
                    return (False, j)
            if j == n:
                if final:
                    return (True, j)
                self._run_scan = j
                return None
            self._run_end = j
        end = self._run_end
        if cjk:
            return (not _quote_continues(s, self._run_term_end, end), end)
        if not s[end].isspace():
            return (False, end)  # 3.14, v1.2.3, example.com, a@b.io, main.py, e.g. (inner dot)
        k = j
        while k < n and s[k].isspace():
            k += 1
            if k - end > self.max_chunk_chars:
                return (True, end)  # a blank this long ends the sentence, whatever comes after it
        if k == n:
            if final:
                return (True, end)
            self._run_scan = k
            return None
        return (_ends_before(s, i, self._run_term_end, s[k]), end)

    def _newline(self, s: str, i: int, final: bool) -> tuple[bool, bool, int, int] | None:
        """Decide the newline at ``s[i]``: ``(ends_chunk, next_is_block, next_line_start, marker_end)``.

        A call for the same newline resumes where the last one stopped. A blank run of more than
        ``max_chunk_chars`` after the newline ends the chunk whatever follows it: then the answer is
        ``(True, False, -1, resume)``, the next line still to classify, its text starting at ``s[resume]``
        (the blank run's first part dropped).
        """
        n = len(s)
        if self._newline_at != i:
            self._newline_at, self._newline_scan, self._newline_blank = i, i + 1, False
        k, blank = self._newline_scan, self._newline_blank
        while k < n and s[k].isspace():
            if k - i > self.max_chunk_chars:
                return (True, False, -1, k)
            blank = blank or s[k] == "\n"
            k += 1
        self._newline_scan, self._newline_blank = k, blank
        if k == n:
            if not final:
                return None
            return (False, False, k, k)
        marker = _line_marker(s, k, final)
        if marker is None:
            return None
        kind, end = marker
        next_block = kind != _PLAIN
        return (blank or self._line_block or next_block, next_block, k, end)
