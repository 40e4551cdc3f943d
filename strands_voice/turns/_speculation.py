"""When the words at a pause are worth answering before the turn is over, and when they are the turn's
words (sans-I/O).

A speculation costs a model request when the caller goes on, and saves the time from the pause's words to
the end of the turn when they do not: the words must look like a whole utterance, and the turn's final
words must be the same words (case and punctuation aside) for the held answer to be theirs.
"""

from __future__ import annotations

from strands_voice.listen import unfinished, words_of

__all__ = ["looks_finished", "same_words"]


def looks_finished(text: str, language: str = "en") -> bool:
    """Whether the words so far could be a whole turn (some words, none that leave it open)."""
    return bool(words_of(text, language)) and not unfinished(text, language)


def same_words(said: str, held: str, language: str = "en") -> bool:
    """Whether ``said`` (the turn's final words) are the words a held answer was asked for."""
    return words_of(said, language) == words_of(held, language)
