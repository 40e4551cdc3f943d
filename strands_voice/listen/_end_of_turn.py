"""Is the caller done? The verdict at a pause, from the words, the turn-end model and the pitch (sans-I/O).

Audio alone is not enough: Smart Turn judges "I would like to know," complete (its prosody falls) and a
human reader's finished statement incomplete. Words alone are not either: a recognizer writes a final
period after nearly everything. So the verdict reads both, and says how much more silence ends the turn
(``wait_s``; None leaves it to the open-turn limit, ``incomplete_silence_s``). "Now" below is
:attr:`Thresholds.complete_wait_s` of silence (:attr:`Thresholds.question_wait_s` for a question), about
what the judging itself takes on a laptop:

1. words that stop where an utterance cannot (:func:`~strands_voice.listen._words.unfinished`: a trailing
   comma, a conjunction, a preposition, an article, "I would like to know") -> the open-turn limit,
   whatever the audio says (a question that strands its preposition aside: 2);
2. a question that ends on the preposition it strands ("Who am I speaking to?") -> now if the audio is
   sure, else :attr:`Thresholds.stranded_wait_s`, longer than a pause mid-sentence: the same words end a
   question cut before the preposition's object ("What do you know about [the family plan]?"), and the
   voice falls at both;
3. a number being dictated ("four one five, ...": digits last) -> :attr:`Thresholds.number_wait_s`,
   longer than the pause between a number's groups;
4. a question whose audio does not clearly go on (``p >= question_p``), or whose voice fell at the end
   (``fall <= fall_st``: Smart Turn doubts some finished questions, wh-questions fall) -> now;
5. words that end a sentence (a final period or "!"): the audio sure (``p >= complete_p``), or a voice that
   fell at the end (:func:`~strands_voice.listen._pitch.final_fall` at or below ``fall_st``) with some
   audio support (``p >= fall_p``) -> now; otherwise -> :attr:`Thresholds.finished_wait_s`;
6. words without a final mark ("Thank you for your patience") -> now if the audio is sure, else
   :attr:`Thresholds.unmarked_wait_s`;
7. no words (not known in time) -> now if the audio is sure, else the open-turn limit.

Every threshold is in :class:`Thresholds` (:data:`THRESHOLDS`, calibrated on the bench's labelled set of
the endpoint's voices and real human recordings: docs/benchmarks.md). The probability reported with the
verdict is the audio's, moved by the words (capped at ``0.1`` when they are unfinished, raised to at least
``0.9`` for a question judged complete by rule 4).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Final

from strands_voice.listen._words import asks, dictating, strands, unfinished

__all__ = ["COMPLETE_P", "QUESTION_P", "THRESHOLDS", "Thresholds", "Verdict", "judge_turn"]

#: The marks that end a written statement (a recognizer's Japanese and Chinese ones too).
_STATEMENT_ENDS: Final = ".!\u3002\uff01"


@dataclass(frozen=True)
class Thresholds:
    """The verdict's thresholds, all in one place.

    Attributes:
        complete_p: The audio probability at which any finished-looking turn is complete.
        question_p: The audio probability at which a question is complete.
        fall_st: A voice whose end is this many semitones below the turn's register (or lower) fell.
        fall_p: The audio probability a fallen voice still needs (a cut word can fall too).
        finished_wait_s: Silence that ends a turn whose words end a sentence but whose sound is unsure.
        unmarked_wait_s: Silence that ends a turn whose words carry no final mark and whose sound is unsure.
        number_wait_s: Silence that ends a turn that stops on a number being dictated (longer than the
            pause between its groups).
        stranded_wait_s: Silence that ends a question on a stranded preposition whose sound is unsure
            (longer than a pause mid-sentence, shorter than the open-turn limit).
        complete_wait_s: The least silence that ends even a complete turn: a caller's breath between two
            sentences, or at a comma the recognizer wrote as a period, is shorter (and on a fast machine
            the verdict comes before it is over).
        question_wait_s: The same for a finished question (a caller rarely goes on after one).
    """

    complete_p: float = 0.5
    question_p: float = 0.3
    fall_st: float = -1.0
    fall_p: float = 0.05
    finished_wait_s: float = 0.3
    unmarked_wait_s: float = 0.45
    number_wait_s: float = 1.1
    stranded_wait_s: float = 1.1
    complete_wait_s: float = 0.25
    question_wait_s: float = 0.15

    def scaled(self, factor: float) -> Thresholds:
        """These thresholds with every wait multiplied by ``factor`` (the bench's sweep of the verdict)."""
        return dataclasses.replace(
            self,
            finished_wait_s=self.finished_wait_s * factor,
            unmarked_wait_s=self.unmarked_wait_s * factor,
            number_wait_s=self.number_wait_s * factor,
            stranded_wait_s=self.stranded_wait_s * factor,
            complete_wait_s=self.complete_wait_s * factor,
            question_wait_s=self.question_wait_s * factor,
        )


#: The shipped thresholds.
THRESHOLDS: Final = Thresholds()
#: The audio probability at which a turn is complete.
COMPLETE_P: Final = THRESHOLDS.complete_p
#: The audio probability at which a question is complete (a question's words already say it is).
QUESTION_P: Final = THRESHOLDS.question_p


@dataclass(frozen=True)
class Verdict:
    """Whether the turn is complete, how likely (0..1), and the silence that ends it if it is not yet.

    Attributes:
        complete: The turn is judged complete.
        p: How likely the turn is complete.
        wait_s: The silence (from the caller's last sound) that ends the turn (None: the listener's
            open-turn limit; a complete verdict without it ends the turn at once).
    """

    complete: bool
    p: float
    wait_s: float | None = None


def judge_turn(
    p_audio: float,
    words: str | None,
    language: str = "en",
    *,
    fall: float | None = None,
    thresholds: Thresholds = THRESHOLDS,
) -> Verdict:
    """The verdict at a pause (see the module docstring).

    Args:
        p_audio: The turn-end model's probability that the turn is complete.
        words: The turn's words up to the pause (None: not known in time; the audio decides).
        language: The caller's language (its word lists; a language without lists: the audio alone).
        fall: The end pitch against the turn's register in semitones (None: unknown).
        thresholds: The thresholds (default :data:`THRESHOLDS`).
    """
    t = thresholds
    sure = p_audio >= t.complete_p
    text = (words or "").strip()
    if not text:
        return Verdict(True, p_audio, t.complete_wait_s) if sure else Verdict(False, p_audio)
    if strands(text, language):
        return (
            Verdict(True, p_audio, t.question_wait_s) if sure else Verdict(False, p_audio, t.stranded_wait_s)
        )
    if dictating(text, language):
        return Verdict(False, min(p_audio, 0.1), t.number_wait_s)
    if unfinished(text, language):
        return Verdict(False, min(p_audio, 0.1))
    fell = fall is not None and fall <= t.fall_st
    if asks(text, language):
        if p_audio >= t.question_p or fell:
            return Verdict(True, max(p_audio, 0.9), t.question_wait_s)
        return Verdict(False, p_audio, t.finished_wait_s)
    if sure or (fell and p_audio >= t.fall_p and text[-1] in _STATEMENT_ENDS):
        return Verdict(True, p_audio, t.complete_wait_s)
    return Verdict(False, p_audio, t.finished_wait_s if text[-1] in _STATEMENT_ENDS else t.unmarked_wait_s)
