"""Spoken text with a char map back to the text it was written as (what normalization returns).

Every rewrite remembers where it came from: :class:`NormalizedText` maps any span of the spoken text back
to the span of the ORIGINAL text it was made from, so word timestamps can index what the client sent.
:class:`NormalizedTextBuilder` makes one, piece by piece, from left to right.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NormalizedText", "NormalizedTextBuilder", "identity"]


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """Spoken text plus, for each of its characters, the span of the original text it came from.

    Attributes:
        original: The text as the client sent it.
        text: The text to speak.
        starts: ``starts[i]`` is where the original span behind ``text[i]`` starts.
        ends: ``ends[i]`` is where that span ends (exclusive).
    """

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The original span that the spoken span ``text[start:end]`` was made from.

        Args:
            start: Start index into :attr:`text`.
            end: End index (exclusive), greater than ``start``.

        Returns:
            ``(char_start, char_end)`` into :attr:`original`.
        """
        if not 0 <= start < end <= len(self.text):
            raise ValueError("span outside the spoken text")
        return min(self.starts[start:end]), max(self.ends[start:end])


def identity(text: str) -> NormalizedText:
    """The text spoken as written (``"normalize": false``), with the one-to-one char map."""
    return NormalizedText(text, text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))


class NormalizedTextBuilder:
    """Builds the :class:`NormalizedText` of ``original`` from left to right: kept spans and rewrites.

    Args:
        original: The written text.
    """

    def __init__(self, original: str) -> None:
        self.original = original
        self.position = 0  # everything before it is kept or rewritten
        self._pieces: list[str] = []
        self._starts: list[int] = []
        self._ends: list[int] = []

    def keep(self, upto: int) -> None:
        """Speak ``original[position:upto]`` as written."""
        if upto > self.position:
            self._pieces.append(self.original[self.position : upto])
            self._starts.extend(range(self.position, upto))
            self._ends.extend(range(self.position + 1, upto + 1))
            self.position = upto

    def replace(self, end: int, spoken: str) -> None:
        """Speak ``spoken`` for ``original[position:end]``.

        What both share at their ends maps char by char ("40 km" → "40 kilometers" keeps "40" on "40");
        the rest maps to the rest as a whole.
        """
        begin, written = self.position, self.original[self.position : end]
        head = 0
        while head < min(len(written), len(spoken)) - 1 and written[head] == spoken[head]:
            head += 1
        tail = 0
        while tail < min(len(written), len(spoken)) - head - 1 and written[-1 - tail] == spoken[-1 - tail]:
            tail += 1
        middle = spoken[head : len(spoken) - tail]
        self._pieces.append(spoken)
        self._starts.extend(range(begin, begin + head))
        self._ends.extend(range(begin + 1, begin + head + 1))
        self._starts.extend([begin + head] * len(middle))
        self._ends.extend([end - tail] * len(middle))
        self._starts.extend(range(end - tail, end))
        self._ends.extend(range(end - tail + 1, end + 1))
        self.position = end

    def build(self) -> NormalizedText:
        """The spoken text so far, the rest of the original kept as written."""
        self.keep(len(self.original))
        return NormalizedText(self.original, "".join(self._pieces), tuple(self._starts), tuple(self._ends))
