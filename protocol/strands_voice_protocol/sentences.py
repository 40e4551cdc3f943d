"""The sentence rule for whole texts, and the abbreviation rule the streaming chunker shares.

A run of ``.!?…`` plus closing marks ends a sentence that has a letter or digit when whitespace and then
a character that is not a lowercase letter follow, and not after an abbreviation or an initial (``Mr.``,
``e.g.``, ``U.S.``, ``J. R. R. Tolkien``; ``No.`` only before a digit); a CJK terminator (``。！？``) ends
one right away, except inside a quotation the sentence goes on from (``「はい。」と言った。``).

:func:`sentence_ends` and :func:`split_at_sentence_ends` apply the rule to a whole text (batch mode, the
TTS endpoint, the scripted stand-in model); the streaming chunker
(:class:`~strands_voice_protocol.chunker.IncrementalSentenceChunker`) applies the same rule to streamed
text, and a property test checks they agree on plain text. The abbreviations are data
(``abbreviations.txt``, package data read with :mod:`importlib.resources`).
"""

from __future__ import annotations

import itertools
import re
from importlib.resources import files
from typing import Final

from strands_voice_protocol.punctuation import CJK_SENTENCE_END, SENTENCE_END

__all__ = [
    "ABBREVIATIONS",
    "CJK_CLOSERS",
    "CLOSERS",
    "ends_before",
    "ends_with_abbreviation",
    "is_abbreviation",
    "quote_continues",
    "sentence_ends",
    "split_at_sentence_ends",
]


def _load_abbreviations() -> frozenset[str]:
    text = files("strands_voice_protocol").joinpath("abbreviations.txt").read_text(encoding="utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


#: Lowercase words that a following ``.`` does not end a sentence after (the dot itself excluded).
ABBREVIATIONS: Final[frozenset[str]] = _load_abbreviations()

#: Closing marks that stay with the sentence they close. No "]" after CJK: a "](url)" link tail must stay
#: whole for cleaning, and CJK ends a sentence with no space, so "。](url)" would otherwise be split.
CLOSERS: Final = "\"'”’»)]}*_`~"
#: The closing marks after a CJK terminator.
CJK_CLOSERS: Final = "」』）】》〕〉\"'”’»)}*_`~"

_TOKEN_OPENERS: Final = "\"'“‘([{*_`~"
_ABBREV_LOOKBACK: Final = 32
_DOTTED_ACRONYM: Final = re.compile(r"(?:[a-z]\.)+[a-z]")


def is_abbreviation(s: str, dot: int, next_char: str, lo: int = 0) -> bool:
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
    return is_abbreviation(stripped, len(stripped) - 1, next_char)


def quote_continues(s: str, term_end: int, end: int) -> bool:
    """Whether the CJK terminators ending at ``s[term_end]`` close a quotation the sentence goes on from:
    closing marks follow them (``s[term_end:end]``), then hiragana (``「はい。」と言った``)."""
    return term_end < end < len(s) and "\u3041" <= s[end] <= "\u309f"


def ends_before(
    s: str, i: int, term_end: int, next_char: str, lo: int = 0, *, lowercase_continues: bool = True
) -> bool:
    """Whether the terminators ``s[i:term_end]``, then closing marks and whitespace, end a sentence
    before ``next_char`` (the first character after the whitespace); ``s[lo]`` starts the sentence."""
    if lowercase_continues and next_char.islower():
        return False  # "approx. five", "Wait... what", '"Really?" she asked'
    return not (term_end == i + 1 and s[i] == "." and is_abbreviation(s, i, next_char, lo))


def sentence_ends(text: str, *, lowercase_continues: bool = True) -> list[int]:
    """Where the chunker's sentence rule ends sentences in a whole text.

    The rule of the module docstring, for code that has the whole text at once, such as the TTS endpoint
    or batch mode. The end of the text is not listed. Unlike the streaming chunker, nothing else ends a
    sentence here (no line or Markdown block rules, no length limit).

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
        if text[i] not in SENTENCE_END:
            has_word = has_word or text[i].isalnum()
            i += 1
            continue
        j = i
        while j < n and text[j] in SENTENCE_END:
            j += 1
        term_end = j
        cjk = any(ch in CJK_SENTENCE_END for ch in text[i:term_end])
        closers = CJK_CLOSERS if cjk else CLOSERS
        while j < n and text[j] in closers:
            j += 1
        k = j
        while k < n and text[k].isspace():
            k += 1
        if cjk:
            ends_here = not quote_continues(text, term_end, j)
        else:
            ends_here = (
                k > j
                and k < n
                and ends_before(text, i, term_end, text[k], start, lowercase_continues=lowercase_continues)
            )
        if j < n and has_word and ends_here:
            ends.append(j)
            start, has_word = j, False
        i = j
    return ends


def split_at_sentence_ends(text: str, *, lowercase_continues: bool = True) -> list[str]:
    """Split a whole text at :func:`sentence_ends` (whitespace-trimmed, blank pieces dropped).

    Args:
        text: A complete text.
        lowercase_continues: As for :func:`sentence_ends`.

    Returns:
        The sentences in order; ``[]`` when the text is blank.
    """
    bounds = [0, *sentence_ends(text, lowercase_continues=lowercase_continues), len(text)]
    pieces = (text[start:end].strip() for start, end in itertools.pairwise(bounds))
    return [piece for piece in pieces if piece]
