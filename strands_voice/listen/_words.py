"""What the caller's words say about taking turns, per language (sans-I/O).

The word lists of every language live in one data file, ``turn_words.json``; a language without its
own lists uses the English ones.

- :func:`unfinished`: the words stop where a sentence cannot (a trailing comma, "... to", "... is", "and",
  "I would like to know", a number still being read): the caller is pausing, not done.
- :func:`dictating`: the words stop on a number still being read (digits or a number word last).
- :func:`asks`: the words end a question.
- :func:`is_backchannel`: the words are only a listener's feedback ("uh-huh", "mm-hmm", "right", "yeah",
  "okay"): said over an answer they ask it to go on, not to stop.
- :func:`interrupts`: the words hold one that stops a speaker however short the utterance ("stop",
  "wait", "sorry", "what"), or ask a question.
- :func:`backchannel_prompt`: the recognizer's context while the agent speaks, so that a backchannel is
  written as one (Whisper writes a mumbled "uh-huh" as "We're hard." without it).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "TurnWords",
    "asks",
    "backchannel_prompt",
    "dictating",
    "interrupts",
    "is_backchannel",
    "turn_words",
    "unfinished",
    "words_of",
]

_TRAILING_OPEN: Final = re.compile(r"(?:,|;|:|-|\u2014|\u2026|\.\.\.)\s*$")
_NUMBER_END: Final = re.compile(r"\d[\d\s,.-]*$")
_WORD: Final = re.compile(r"[a-z0-9']+(?:-[a-z0-9']+)*")
_PHRASE_SPLIT: Final = re.compile(r"[.,!?;]+")


@dataclass(frozen=True)
class TurnWords:
    """One language's lists (see ``turn_words.json``)."""

    backchannels: frozenset[str]
    interruptions: frozenset[str]
    open_endings: frozenset[str]
    open_phrases: re.Pattern[str]
    backchannel_prompt: str
    number_words: frozenset[str] = frozenset()


@functools.cache
def _all_languages() -> dict[str, TurnWords]:
    raw = json.loads(importlib.resources.files(__package__).joinpath("turn_words.json").read_text("utf-8"))
    return {
        language: TurnWords(
            frozenset(lists["backchannels"]),
            frozenset(lists["interruptions"]),
            frozenset(lists["open_endings"]),
            re.compile(lists["open_phrases"]),
            lists["backchannel_prompt"],
            frozenset(lists.get("number_words", ())),
        )
        for language, lists in raw.items()
    }


def turn_words(language: str = "en") -> TurnWords:
    """The lists of ``language`` (its first two letters; English when it has none)."""
    languages = _all_languages()
    return languages.get(language[:2].lower(), languages["en"])


def words_of(text: str) -> list[str]:
    """The lowercase words of ``text`` (hyphenated words kept whole), punctuation dropped."""
    return _WORD.findall(text.lower())


def unfinished(text: str, language: str = "en") -> bool:
    """Whether ``text`` stops where an utterance cannot (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return False
    if _TRAILING_OPEN.search(stripped):
        return True
    words = words_of(stripped)
    if not words:
        return False
    lists = turn_words(language)
    if words[-1] in lists.open_endings or lists.open_phrases.search(" ".join(words)):
        return True
    return dictating(stripped, language)


def dictating(text: str, language: str = "en") -> bool:
    """Whether ``text`` stops on a number still being read ("my order number is 4 2 7", "four one five,"):
    digits or a number word last, and no question asked."""
    stripped = text.strip()
    if not stripped or stripped.endswith("?"):
        return False
    if _NUMBER_END.search(stripped.rstrip(".!")):
        return True
    words = words_of(stripped)
    return bool(words) and words[-1] in turn_words(language).number_words


def asks(text: str) -> bool:
    """Whether ``text`` ends a question."""
    return text.strip().endswith("?")


def is_backchannel(text: str, language: str = "en") -> bool:
    """Whether ``text`` holds words and every phrase of it is a listener's feedback."""
    backchannels = turn_words(language).backchannels
    phrases = [words_of(phrase) for phrase in _PHRASE_SPLIT.split(text)]
    phrases = [words for words in phrases if words]
    return bool(phrases) and all(
        " ".join(words) in backchannels or all(word in backchannels for word in words) for words in phrases
    )


def interrupts(text: str, language: str = "en") -> bool:
    """Whether ``text`` holds a word that stops a speaker however short the utterance, or asks a question."""
    words = {part for word in words_of(text) for part in word.split("-")}
    return asks(text) or bool(words & turn_words(language).interruptions)


def backchannel_prompt(language: str = "en") -> str:
    """The recognizer's context while the agent speaks (the backchannels as they should be written)."""
    return turn_words(language).backchannel_prompt
