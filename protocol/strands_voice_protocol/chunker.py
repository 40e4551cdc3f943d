"""Incremental sentence chunking of streamed LLM text for TTS (sans-I/O).

:class:`IncrementalSentenceChunker` takes text deltas as they stream from the model and hands back
chunks ready to speak: whole sentences (or, for the very first chunk, a clause, so speech starts sooner),
never longer than ``max_chunk_chars``, cleaned of Markdown and symbols a voice should not read
(:mod:`.speech_text`).

How it decides, in short:

* A sentence ends by the rule of :mod:`.sentences`: at ``.``, ``!``, ``?`` or ``…`` (runs like ``?!``
  and ``...`` count as one), plus any closing quotes, brackets or Markdown emphasis after it, when
  whitespace and then a word that does not start with a lowercase letter follow; not after an
  abbreviation or an initial; right away after a CJK terminator (``。！？``) unless a quotation goes on.
  So decimals, versions, times, URLs, e-mail addresses and file names (no whitespace after the dot) do
  not end a sentence. The marks are :mod:`.punctuation`'s.
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
"""

from __future__ import annotations

from typing import Final

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.punctuation import CJK_CLAUSE_END, CJK_SENTENCE_END, CLAUSE_END, SENTENCE_END
from strands_voice_protocol.sentences import CJK_CLOSERS, CLOSERS, ends_before, quote_continues
from strands_voice_protocol.speech_text import PLAIN, clean_chunk, line_marker

__all__ = ["IncrementalSentenceChunker"]

_FEED_PIECE_CHARS: Final = 4096


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
        self._emitted = 0  # non-empty chunks handed out: the first chunk has its own rules
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
        text = clean_chunk(self._buf[:end], self._starts_line)
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
        """Scan ``_buf`` from ``_pos``, handing out each chunk that is decided; stop where text is wanted.

        Each step looks at the character at the scan position and returns the next position (0 after a
        cut, which shifts ``_buf``), or None to wait for more text (the position is kept for the next
        feed).
        """
        out: list[str] = []
        i = self._pos
        while True:
            if self._start >= 0 and i - self._start >= self.max_chunk_chars:
                cut = self._max_cut()
                self._cut(cut, cut, out)
                i = 0
                continue
            if i >= len(self._buf):
                break
            step = self._step(i, final, out)
            if step is None:
                break
            i = step
        self._pos = i
        return out

    def _step(self, i: int, final: bool, out: list[str]) -> int | None:
        """One scan step at ``_buf[i]``: the next position, or None to wait for more text."""
        ch = self._buf[i]
        if self._start < 0 and i >= self.max_chunk_chars and ch.isspace():
            # Only blanks and block markers so far, nothing to speak: drop them, so a long blank run
            # does not grow the buffer. The text after is mid-line unless its line is still unclassified.
            self._cut(i, i, out, starts_line=self._need_line)
            return 0
        if self._need_line:
            return self._classify_line(i, final)
        if ch.isspace():
            return self._at_space(i, final, out)
        if self._start < 0:
            self._start = i
        if ch in SENTENCE_END:
            ended = self._sentence_end(self._buf, i, final)
            if ended is None:
                return None
            self._run_at = -1
            ends, end = ended
            if ends and self._has_word and end - self._start <= self.max_chunk_chars:
                self._cut(end, end, out)
                return 0
            return end
        if ch in CJK_CLAUSE_END:
            self._last_clause = i + 1
            if self._first_clause_ready(i + 1):
                self._cut(i + 1, i + 1, out)
                return 0
        elif ch.isalnum():
            self._has_word = True
        return i + 1

    def _classify_line(self, i: int, final: bool) -> int | None:
        """Read the block marker of the line at ``_buf[i]`` (its indent one character at a time)."""
        ch = self._buf[i]
        if ch != "\n" and ch.isspace():
            return i + 1  # one by one, so a long indent is scanned once
        marker = line_marker(self._buf, i, final)
        if marker is None:
            return None
        self._line_block = marker[0] != PLAIN
        self._need_line = False
        return marker[1]

    def _at_space(self, i: int, final: bool, out: list[str]) -> int | None:
        """Whitespace at ``_buf[i]``: a clause boundary, a forced first cut, a newline, or a cut position."""
        buf = self._buf
        if i > 0 and buf[i - 1] in CLAUSE_END and self._start >= 0:
            self._last_clause = i
            if self._first_clause_ready(i):
                self._cut(i, i, out)
                return 0
        if (
            self.first_chunk_max_chars is not None
            and self._emitted == 0
            and self._has_word
            and self._start >= 0
            and i - self._start >= self.first_chunk_max_chars
            and buf[i - 1] not in SENTENCE_END
            and not buf[i - 1].isspace()
        ):
            self._cut(i, i, out)
            return 0
        if buf[i] == "\n":
            return self._at_newline(i, final, out)
        self._last_space = i
        return i + 1

    def _at_newline(self, i: int, final: bool, out: list[str]) -> int | None:
        """A newline at ``_buf[i]``: end the chunk there (and skip the next line's marker) or scan on."""
        decision = self._newline(self._buf, i, final)
        if decision is None:
            return None
        self._newline_at = -1
        brk, next_block, line_start, marker_end = decision
        if line_start < 0:
            # A long blank run after the newline: end the chunk here, whatever it holds, drop the run
            # scanned so far and classify the next line when it comes.
            self._cut(i, marker_end, out, starts_line=True)
            self._need_line = True
            return 0
        if brk and self._has_word:
            self._cut(i, line_start, out, starts_line=True)
            nxt = marker_end - line_start
        else:
            self._last_space = i
            nxt = marker_end
        self._line_block = next_block
        return nxt

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
            while j < n and s[j] in SENTENCE_END:
                self._run_cjk = self._run_cjk or s[j] in CJK_SENTENCE_END
                j += 1
                if j > limit:
                    return (False, j)
            if j == n and not final:
                self._run_scan = j
                return None
            self._run_term_end = j
        cjk = self._run_cjk
        if self._run_end < 0:
            closers = CJK_CLOSERS if cjk else CLOSERS
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
            return (not quote_continues(s, self._run_term_end, end), end)
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
        return (ends_before(s, i, self._run_term_end, s[k]), end)

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
        marker = line_marker(s, k, final)
        if marker is None:
            return None
        kind, end = marker
        next_block = kind != PLAIN
        return (blank or self._line_block or next_block, next_block, k, end)
