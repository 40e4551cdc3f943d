"""What the caller's words over an answer mean: a barge-in, or an answer that goes on (sans-I/O).

The words come from the one list of each language (``turn_words.json``, read by
:func:`strands_voice.listen.turn_words`, which the end-of-turn verdict reads too):

- :func:`is_backchannel`: the words are only a listener's feedback ("uh-huh", "right", はい、なるほど, 嗯,
  "vale"): said over an answer they ask it to go on, not to stop.
- :func:`interrupts`: the words hold one that stops a speaker however short the utterance ("stop",
  "wait", 「ちょっと待って」, 「すみません」, "perdón"), or ask a question.
- :func:`barges_in`: the rule that reads both, with the utterance's length and the recognizer's confidence.

Japanese and Chinese are matched on characters, with the recognizer's punctuation as the only boundaries.
"""

from __future__ import annotations

import re
from typing import Final

from strands_voice.listen import asks, turn_words, words_of
from strands_voice.turns._settings import TurnSettings

__all__ = ["barges_in", "interrupts", "is_backchannel", "long_speech_s", "sure_before_the_end"]

_PHRASE_SPLIT: Final = re.compile(r"[.,!?;:\u3001\u3002\uff0c\uff01\uff1f\uff1b\uff1a\u2026\u00bf\u00a1]+")


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


def long_speech_s(settings: TurnSettings) -> float:
    """How long speech over an answer lasts without a pause before it barges in, words unknown: the
    settings' ``overlap_speech_s``, or longer where the language's backchannels are (「そうですね」 said
    slowly runs past 0.8 s; "uh-huh" never does)."""
    lists = turn_words(settings.language)
    longest = lists.longest_backchannel_s if lists is not None else 0.0
    return max(settings.overlap_speech_s, longest)


def sure_before_the_end(text: str, settings: TurnSettings) -> bool:
    """Whether words that barge in (:func:`barges_in`), heard at a pause before the caller's utterance
    ended, do so now.

    A word that stops a speaker, a question, or a sentence does. Any other short utterance waits for its
    final words (the answer stays held meanwhile): it may be a backchannel not yet finished (「そうです」
    before its 「ね」, "yeah I" before "see").
    """
    sentence = len(words_of(text, settings.language)) >= settings.sentence_words
    return sentence or interrupts(text, settings.language)


def is_backchannel(text: str, language: str = "en") -> bool:
    """Whether ``text`` holds words and every phrase of it is a listener's feedback."""
    lists = turn_words(language)
    if lists is None:
        return False
    if not lists.spaced:
        bare = [chars for phrase in _PHRASE_SPLIT.split(text) if (chars := _bare(phrase, lists.code))]
        return bool(bare) and all(_made_of(phrase, lists.backchannels) for phrase in bare)
    backchannels = lists.backchannels
    split = [words_of(phrase, lists.code) for phrase in _PHRASE_SPLIT.split(text)]
    phrases = [words for words in split if words]
    return bool(phrases) and all(
        " ".join(words) in backchannels or all(word in backchannels for word in words) for words in phrases
    )


def interrupts(text: str, language: str = "en") -> bool:
    """Whether ``text`` holds a word that stops a speaker however short the utterance, or asks a question."""
    lists = turn_words(language)
    if lists is None:
        return False
    if asks(text, lists.code):
        return True
    if not lists.spaced:
        bare = _bare(text, lists.code)
        return any(phrase in bare for phrase in lists.interruptions)
    words = words_of(text, lists.code)
    parts = {part for word in words for part in word.split("-")}
    joined = f" {' '.join(words)} "
    return bool(parts & lists.interruptions) or any(
        f" {phrase} " in joined for phrase in lists.interruptions if " " in phrase
    )


def _bare(text: str, code: str) -> str:
    """An unspaced language's text as matched: lowercase, no spaces or punctuation (its words are its
    characters two by two, so joined they are the text as matched)."""
    return "".join(words_of(text, code))


def _made_of(phrase: str, pieces: frozenset[str]) -> bool:
    """Whether an unspaced phrase is backchannels one after another (「はいはい」, 「うんうん、なるほど」)."""
    ends = {0}
    for end in range(1, len(phrase) + 1):
        if any(start in ends and phrase[start:end] in pieces for start in range(end)):
            ends.add(end)
    return len(phrase) in ends
