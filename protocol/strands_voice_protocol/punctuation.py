"""The punctuation classes the sentence rules, the endpoint's phrase splitter and its pauses share.

Latin marks end a sentence or clause only when whitespace (or the end of the text) follows them; CJK marks
end one right away, since CJK text puts no space after them.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CJK_CLAUSE_END",
    "CJK_SENTENCE_END",
    "CLAUSE_END",
    "SENTENCE_END",
]

#: Marks that end a sentence (Latin and CJK).
SENTENCE_END: Final = ".!?…。！？"

#: The CJK ones among them: a sentence ends right after them.
CJK_SENTENCE_END: Final = "。！？"

#: Latin marks that end a clause when whitespace follows.
CLAUSE_END: Final = ",;:—–"

#: CJK marks that end a clause right away.
CJK_CLAUSE_END: Final = "，、；："
