"""Text and phoneme segmentation (pure functions): what one model call synthesizes.

Kokoro-82M takes at most 510 phonemes per call. The endpoint splits a request into sentences first, so
the first sentence's audio can be sent while the rest is still being synthesized, and then splits any
sentence whose phonemes exceed the limit at the best boundary it can find (the way ``KPipeline`` does):
sentence punctuation, then clause punctuation, then a space, then a hard cut.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_PHONEMES", "split_phonemes", "split_sentences"]

#: Kokoro's context is 512 tokens including the two padding tokens.
MAX_PHONEMES: Final = 510

# A sentence ends at terminal punctuation (optionally followed by closing quotes/brackets) and whitespace,
# or at a line break.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?…;:])|(?<=[.!?…;:][\"'”’)\]]))\s+|\n+")
_BOUNDARIES: Final = (".!?…", ";:", ",—", " ")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (whitespace-trimmed, empty ones dropped).

    Args:
        text: Any text.

    Returns:
        The sentences in order; ``[]`` when the text is blank.
    """
    return [part.strip() for part in _SENTENCE_END.split(text) if part and part.strip()]


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
