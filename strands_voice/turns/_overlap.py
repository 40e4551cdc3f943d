"""What the caller's words over an answer mean: a barge-in, or an answer that goes on (sans-I/O)."""

from __future__ import annotations

from strands_voice.listen import interrupts, is_backchannel
from strands_voice.listen._words import words_of
from strands_voice.turns._settings import TurnSettings

__all__ = ["barges_in"]


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
