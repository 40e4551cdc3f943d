"""Text and phoneme segmentation (pure functions): what one model call synthesizes.

Kokoro-82M takes at most 510 phonemes per call. The endpoint splits a request into sentences first, by
the chunker's rule (:func:`strands_voice_protocol.sentences.split_at_sentence_ends`: not after ``Dr.``,
``e.g.`` or an initial; here a lowercase word after the dot starts a sentence too), and also at line
breaks, so the first sentence's audio can be sent while the rest is still being synthesized. A long
sentence is then split at its clause punctuation (``,`` ``;`` ``:`` ``—`` before a space, or ``、``
``，``) into phrases of about ``clause_chars`` characters, so its first audio does not wait for the whole
sentence (on a CPU a long sentence takes seconds); and a phrase whose phonemes still exceed the model's
limit is cut at the best boundary found (the way ``KPipeline`` does): sentence punctuation, then clause
punctuation, then a space, then a hard cut.
"""

from __future__ import annotations

import re
from typing import Final

from strands_voice_protocol.punctuation import CJK_CLAUSE_END, CLAUSE_END, SENTENCE_END
from strands_voice_protocol.sentences import ends_with_abbreviation, split_at_sentence_ends

__all__ = [
    "DEFAULT_CLAUSE_CHARS",
    "MAX_PHONEMES",
    "MIN_CLAUSE_CHARS",
    "locate",
    "split_clauses",
    "split_phonemes",
    "split_segments",
    "split_sentences",
]

#: Sentences longer than this are split into phrases at their clause punctuation (``Settings`` default).
DEFAULT_CLAUSE_CHARS: Final = 60

#: No phrase split off a sentence is shorter than this: "So," or "Well," alone would sound clipped.
MIN_CLAUSE_CHARS: Final = 16

#: Kokoro's context is 512 tokens including the two padding tokens.
MAX_PHONEMES: Final = 510

# Where to cut phonemes, best first: after a sentence mark, a strong clause mark, a weak one, a space.
_BOUNDARIES: Final = (SENTENCE_END, ";:", ",—", " ")
# A clause ends at a comma, semicolon, colon or dash followed by whitespace ("1,000" is not a boundary),
# or at a full-width (CJK) one, which no space follows.
_CLAUSE_END: Final = re.compile(f"[{re.escape(CLAUSE_END)}](?=\\s)|[{re.escape(CJK_CLAUSE_END)}]")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (whitespace-trimmed, empty ones dropped).

    The chunker's sentence rule, with two rules of the endpoint's own for text that clients send as it
    is: a lowercase word after ``.`` ``!`` ``?`` starts a new sentence (``"one two. three four."``), and
    a line break ends a sentence too (a list or a heading sent as plain lines), except after an
    abbreviation or an initial. A dot after an abbreviation or an initial (``Dr. Lee``, ``e.g. this``,
    ``J. Smith``) ends no sentence.

    Args:
        text: Any text.

    Returns:
        The sentences in order; ``[]`` when the text is blank.
    """
    sentences: list[str] = []
    for sentence in split_at_sentence_ends(text, lowercase_continues=False):
        pending = ""
        for line in sentence.split("\n"):
            line = line.strip()
            if not line:
                continue
            if pending:
                if ends_with_abbreviation(pending, line[0]):
                    pending = f"{pending} {line}"
                    continue
                sentences.append(pending)
            pending = line
        if pending:
            sentences.append(pending)
    return sentences


def locate(text: str, piece: str, start: int = 0) -> int:
    """Where ``piece`` (a sentence or phrase split off ``text``) starts in ``text``, at or after ``start``.

    The splitters trim pieces and join an abbreviation's sentence back with one space, so the piece is
    searched with any run of whitespace matching any other.

    Returns:
        The index, or -1 when the piece is not there.
    """
    words = piece.split()
    if not words:
        return -1
    match = re.compile(r"\s+".join(re.escape(word) for word in words)).search(text, start)
    return -1 if match is None else match.start()


def split_clauses(sentence: str, max_chars: int, min_chars: int = MIN_CLAUSE_CHARS) -> list[str]:
    """Split a long sentence into phrases at its clause punctuation.

    Each cut is the last clause boundary that keeps the phrase within ``max_chars`` (or, when there is
    none, the first one past it), and leaves at least ``min_chars`` on both sides. A sentence without
    such a boundary stays whole: phrases are never cut between words.

    Args:
        sentence: One sentence.
        max_chars: Sentences (and remainders) longer than this are split.
        min_chars: The shortest phrase to split off.

    Returns:
        The phrases in order (the sentence alone when it is short or has no usable boundary).
    """
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    phrases: list[str] = []
    rest = sentence.strip()
    while len(rest) > max_chars:
        ends = [
            match.end()
            for match in _CLAUSE_END.finditer(rest)
            # Measured as the phrases will be (trimmed): the match may end in whitespace.
            if len(rest[: match.end()].strip()) >= min_chars and len(rest[match.end() :].strip()) >= min_chars
        ]
        if not ends:
            break
        within = [end for end in ends if end <= max_chars]
        cut = within[-1] if within else ends[0]
        phrases.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        phrases.append(rest)
    return phrases


def split_segments(text: str, clause_chars: int | None = DEFAULT_CLAUSE_CHARS) -> list[str]:
    """What the endpoint asks the engine for, in order: sentences, long ones split into phrases.

    Args:
        text: A request's text.
        clause_chars: Split sentences longer than this at clause punctuation; None keeps them whole.

    Returns:
        The pieces in order; ``[]`` when the text is blank.
    """
    sentences = split_sentences(text)
    if clause_chars is None:
        return sentences
    return [phrase for sentence in sentences for phrase in split_clauses(sentence, clause_chars)]


def _cut_point(phonemes: str, limit: int) -> int:
    """Where to cut ``phonemes`` so the head is at most ``limit`` long: after the best boundary."""
    window = phonemes[: limit + 1]
    for marks in _BOUNDARIES:
        best = max(window.rfind(mark, 0, limit) for mark in marks)
        if best > 0:
            return best + 1
    return limit


def split_phonemes(phonemes: str, limit: int = MAX_PHONEMES) -> list[str]:
    """Split a phoneme string into pieces of at most ``limit`` characters.

    Args:
        phonemes: The phonemes of one sentence.
        limit: The most phonemes one model call accepts.

    Returns:
        Non-blank pieces, in order, each at most ``limit`` long.
    """
    if limit < 1:
        raise ValueError("limit must be positive")
    pieces: list[str] = []
    rest = phonemes.strip()
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        head, rest = rest[:cut].strip(), rest[cut:].strip()
        if head:
            pieces.append(head)
    if rest:
        pieces.append(rest)
    return pieces
