"""What the caller's words over an answer mean: a barge-in, or an answer that goes on (sans-I/O)."""

from __future__ import annotations

from strands_voice.listen import interrupts, is_backchannel
from strands_voice.listen._words import words_of
from strands_voice.turns._settings import TurnSettings

__all__ = ["barges_in", "sure_before_the_end"]


def barges_in(text: str, confidence: float | None, settings: TurnSettings) -> bool:
    """Whether words said over an answer stop it.

    No words, or only backchannels ("uh-huh", "right"), let it go on. A word that stops a speaker
    ("stop", "wait", "sorry") or a question stops it however short; so does a sentence
    (``sentence_words`` words or more). Any other short utterance stops it only when the recognizer is
    sure of it (``min_confidence``): a mumbled backchannel comes out as odd words of low confidence.
    """
    words = words_of(text, settings.language)
    if not words or is_backchannel(text, settings.language):
        return False
    if interrupts(text, settings.language) or len(words) >= settings.sentence_words:
        return True
    return confidence is None or confidence >= settings.min_confidence


def sure_before_the_end(text: str, settings: TurnSettings) -> bool:
    """Whether words over an answer, heard at a pause before the caller's utterance ended, barge in now.

    A word that stops a speaker, a question, or a sentence does. Any other short utterance waits for its
    final words (the answer stays held meanwhile): it may be a backchannel not yet finished (「そうです」
    before its 「ね」, "yeah I" before "see").
    """
    if not barges_in(text, None, settings):
        return False
    sentence = len(words_of(text, settings.language)) >= settings.sentence_words
    return sentence or interrupts(text, settings.language)
