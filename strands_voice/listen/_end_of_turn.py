"""Is the caller done? The verdict at a pause, from the turn-end model's probability and the words (sans-I/O).

Audio alone is not enough: Smart Turn judges "I would like to know," complete (its prosody falls) and
some whole statements incomplete. Words alone are not either: a recognizer writes a final period after
nearly everything. So the verdict reads both, in this order:

1. words that stop where an utterance cannot (:func:`~strands_voice.listen._words.unfinished`: a trailing
   comma, "... to", "... is", "I would like to know", a number being read) -> incomplete, whatever the
   audio says;
2. a question whose audio does not clearly go on (``p >= question_p``) -> complete;
3. otherwise the audio decides: ``p >= complete_p`` -> complete.

The probability reported with the verdict is the audio's, moved by the words (capped at ``0.1`` when they
are unfinished, raised to at least ``0.9`` for a question judged complete).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from strands_voice.listen._words import asks, unfinished

__all__ = ["COMPLETE_P", "QUESTION_P", "Verdict", "judge_turn"]

#: The audio probability at which a turn is complete.
COMPLETE_P: Final = 0.5
#: The audio probability at which a question is complete (a question's words already say it is).
QUESTION_P: Final = 0.3


@dataclass(frozen=True)
class Verdict:
    """Whether the turn is complete, and how likely (0..1)."""

    complete: bool
    p: float


def judge_turn(
    p_audio: float,
    words: str | None,
    language: str = "en",
    *,
    complete_p: float = COMPLETE_P,
    question_p: float = QUESTION_P,
) -> Verdict:
    """The verdict at a pause (see the module docstring).

    Args:
        p_audio: The turn-end model's probability that the turn is complete.
        words: The turn's words up to the pause (None: not known in time; the audio decides).
        language: The caller's language (its word lists; a language without lists: the audio alone).
        complete_p: The audio probability at which a turn is complete.
        question_p: The audio probability at which a question is complete.
    """
    if words is not None and unfinished(words, language):
        return Verdict(False, min(p_audio, 0.1))
    if words is not None and asks(words, language) and p_audio >= question_p:
        return Verdict(True, max(p_audio, 0.9))
    return Verdict(p_audio >= complete_p, p_audio)
