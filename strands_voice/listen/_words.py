"""What the caller's words say about taking turns, per language (sans-I/O): the lists, and the words of
the end of a turn.

The word lists of every language live in one data file, ``turn_words.json``, keyed by language (ISO 639-1:
``en``, ``ja``, ``es``, ``fr``, ``it``, ``pt``, ``hi``, ``zh``) and then by list. A language is named by
Kokoro's letter (``j``), its code (``ja``) or a BCP-47 tag (``ja-JP``). A language without lists gets no
guess from another's: its turns are judged by the sound alone, and the log says so once.

- :func:`unfinished`: the words stop where a sentence cannot (a trailing comma, "... to", "... is", "and",
  "I would like to know", a number still being read; 「…て、」「…けど」「…ので」): the caller is pausing.
  An auxiliary after its subject can end one ("... than he was", "Yes, I do": the rest of the verb is
  left out), after the words that allow it (``closed_phrases``: English's, and a verb after its pronoun
  in Spanish, French and Italian: "Sí, lo es", "Sì, lo sono").
- :func:`dictating`: the words stop on a number still being read (digits or a number word last).
- :func:`strands`: a question ends on the preposition it strands ("Who am I speaking to?"): finished, or
  cut before the preposition's object ("What do you know about [the family plan]?"); the words cannot
  tell which (English's ``stranded_questions``).
- :func:`asks`: the words end a question ("?", 「…ですか」「…の」「…よね」, 「…吗」).
- :func:`backchannel_prompt`: the recognizer's context while the agent speaks, so that a backchannel is
  written as one (Whisper writes a mumbled "uh-huh" as "We're hard." without it; the listener's, so here).
- :func:`turn_words`: one language's lists (:class:`TurnWords`), the one loader of the data file; the
  words said over an answer (a backchannel, an interruption) are judged beside the rules that act on them,
  in :mod:`strands_voice.turns._overlap`, from these same lists.

Japanese and Chinese are written without spaces: their lists are matched on characters (the end of the
text, a phrase inside it), with the recognizer's punctuation (、。？！，) as the only boundaries, and
their "words" (:func:`words_of`) are pairs of characters, about a word's length (joined again, the text
as it is matched).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from strands_voice_protocol.languages import hearing_language
from strands_voice_protocol.sentences import split_at_sentence_ends

__all__ = [
    "TurnWords",
    "asks",
    "backchannel_prompt",
    "dictating",
    "strands",
    "turn_words",
    "unfinished",
    "words_of",
]

logger = logging.getLogger(__name__)

#: Languages written without spaces between words.
_UNSPACED: Final = frozenset({"ja", "zh"})
_TRAILING_OPEN: Final = re.compile(r"(?:,|;|:|-|\u2014|\u2026|\.\.\.|\u3001|\uff0c|\uff1a|\uff1b)\s*$")
_NUMBER_END: Final = re.compile(r"\d[\d\s,.-]*$")
# Letters and digits of any script, with the combining marks of Devanagari and Latin accents.
_LETTER: Final = r"(?:[^\W_]|[\u0300-\u036f\u0900-\u0963\u0966-\u097f])"
_WORD: Final = re.compile(rf"{_LETTER}+(?:['\u2019-]{_LETTER}+)*'?")
_QUESTION_MARK: Final = re.compile(r"[?\uff1f]\s*$")
_END_MARKS: Final = "\u3002.!\uff01\u2026~\u301c\uff5e\u30fc\u3000 "
# What is not a character of a word in an unspaced language (matching skips it).
_NOT_CJK_WORD: Final = re.compile(
    r"[\s\u3000-\u3003\u300c-\u300f\uff01-\uff0f\uff1a-\uff20.,!?;:'\"~\u2026-]+"
)
_warned: set[str] = set()


@dataclass(frozen=True)
class TurnWords:
    """One language's lists (see ``turn_words.json``).

    Attributes:
        code: The language (ISO 639-1).
        spaced: Whether its words are written apart (False: Japanese, Chinese: matched on characters).
        backchannels: What a listener says over a speaker (whole phrases).
        interruptions: Words or phrases that stop a speaker.
        open_endings: Last words (unspaced: endings of the text) after which a sentence cannot stop.
        closed_endings: Endings that look open but end a sentence (「教えて」 is a request, not a clause).
        open_phrases: A pattern of the last words that leave the sentence open.
        closed_phrases: A pattern of last words that end a sentence on an open ending (an auxiliary
            after its subject, the rest of the verb left out: "... than he was", "Yes, I do").
        stranded_questions: A pattern of the words of a question that ends on the preposition it
            strands (a question word, and the preposition last: "who am i speaking to").
        question_endings: Endings of a question (besides "?").
        question_starts: First words of a question (Hindi's 「क्या」).
        backchannel_prompt: The recognizer's context while the agent speaks.
        number_words: Number words that, said last, mean a number is still being read.
        longest_backchannel_s: How long this language's longest common backchannel lasts when said
            without a pause (0: no longer than the turn settings' ``overlap_speech_s`` allows).
    """

    code: str
    spaced: bool
    backchannels: frozenset[str]
    interruptions: frozenset[str]
    open_endings: tuple[str, ...]
    closed_endings: tuple[str, ...]
    open_phrases: re.Pattern[str] | None
    closed_phrases: re.Pattern[str] | None
    stranded_questions: re.Pattern[str] | None
    question_endings: tuple[str, ...]
    question_starts: frozenset[str]
    backchannel_prompt: str
    number_words: frozenset[str] = frozenset()
    longest_backchannel_s: float = 0.0


def _lists(code: str, lists: dict[str, Any]) -> TurnWords:
    def longest_first(key: str) -> tuple[str, ...]:
        return tuple(sorted(lists.get(key, ()), key=len, reverse=True))

    def pattern(key: str) -> re.Pattern[str] | None:
        return re.compile(lists[key]) if lists.get(key) else None

    return TurnWords(
        code=code,
        spaced=code not in _UNSPACED,
        backchannels=frozenset(lists.get("backchannels", ())),
        interruptions=frozenset(lists.get("interruptions", ())),
        open_endings=longest_first("open_endings"),
        closed_endings=longest_first("closed_endings"),
        open_phrases=pattern("open_phrases"),
        closed_phrases=pattern("closed_phrases"),
        stranded_questions=pattern("stranded_questions"),
        question_endings=longest_first("question_endings"),
        question_starts=frozenset(lists.get("question_starts", ())),
        backchannel_prompt=lists.get("backchannel_prompt", ""),
        number_words=frozenset(lists.get("number_words", ())),
        longest_backchannel_s=float(lists.get("longest_backchannel_s", 0.0)),
    )


@functools.cache
def _all_languages() -> dict[str, TurnWords]:
    raw = json.loads(importlib.resources.files(__package__).joinpath("turn_words.json").read_text("utf-8"))
    return {code: _lists(code, lists) for code, lists in raw.items()}


def _code(language: str) -> str:
    known = hearing_language(language)
    return known.code if known is not None else language.split("-")[0].lower()


def turn_words(language: str = "en") -> TurnWords | None:
    """The lists of ``language`` (a letter, a code or a tag); None: it has none (the sound alone judges)."""
    code = _code(language)
    lists = _all_languages().get(code)
    if lists is None and code not in _warned:
        _warned.add(code)
        logger.warning(
            "language=<%s> | no turn words for this language: its turns are judged by the sound alone",
            language,
        )
    return lists


def words_of(text: str, language: str = "en") -> list[str]:
    """The lowercase words of ``text`` (hyphenated words kept whole), punctuation dropped; for Japanese
    and Chinese, its characters two by two."""
    if _code(language) in _UNSPACED:
        chars = _NOT_CJK_WORD.sub("", text.lower())
        return [chars[i : i + 2] for i in range(0, len(chars), 2)]
    return _WORD.findall(text.lower())


def _ends_with(text: str, endings: Iterable[str]) -> bool:
    return any(text.endswith(ending) for ending in endings)


def unfinished(text: str, language: str = "en") -> bool:
    """Whether ``text`` stops where an utterance cannot (see the module docstring)."""
    stripped = text.strip()
    lists = turn_words(language)
    if not stripped or lists is None:
        return False
    if _TRAILING_OPEN.search(stripped):
        return True
    if not lists.spaced:
        if _QUESTION_MARK.search(stripped):
            return False
        bare = stripped.rstrip(_END_MARKS)
        if _ends_with(bare, lists.closed_endings) or not _ends_with(bare, lists.open_endings):
            return dictating(stripped, lists.code)
        return True
    words = words_of(stripped, lists.code)
    if not words:
        return False
    joined = " ".join(words)
    closed = lists.closed_phrases is not None and lists.closed_phrases.search(joined)
    if (words[-1] in lists.open_endings and not closed) or (
        lists.open_phrases and lists.open_phrases.search(joined)
    ):
        return lists.code == "en" or not _QUESTION_MARK.search(stripped)
    return dictating(stripped, lists.code)


def dictating(text: str, language: str = "en") -> bool:
    """Whether ``text`` stops on a number still being read ("my order number is 4 2 7", "four one five,"):
    digits or one of the language's number words last, and no question asked."""
    stripped = text.strip()
    if not stripped or _QUESTION_MARK.search(stripped):
        return False
    if _NUMBER_END.search(stripped.rstrip(".!\u3002")):
        return True
    lists = turn_words(language)
    if lists is None or not lists.number_words:
        return False
    words = words_of(stripped, lists.code)
    return bool(words) and words[-1] in lists.number_words


def strands(text: str, language: str = "en") -> bool:
    """Whether ``text`` is a question that ends on the preposition it strands ("Who am I speaking to?",
    "What is this charge for?"): a question mark last, and the language's ``stranded_questions`` in the
    last sentence."""
    stripped = text.strip()
    lists = turn_words(language)
    if lists is None or lists.stranded_questions is None or not _QUESTION_MARK.search(stripped):
        return False
    last = split_at_sentence_ends(stripped)[-1]
    return bool(lists.stranded_questions.search(" ".join(words_of(last, lists.code))))


def asks(text: str, language: str = "en") -> bool:
    """Whether ``text`` ends a question (a question mark, or the language's question words)."""
    stripped = text.strip()
    lists = turn_words(language)
    if lists is None or not stripped:
        return False
    if _QUESTION_MARK.search(stripped):
        return True
    if not lists.spaced:
        return _ends_with(stripped.rstrip(_END_MARKS), lists.question_endings)
    words = words_of(stripped, lists.code)
    return bool(words) and (words[0] in lists.question_starts or words[-1] in lists.question_endings)


def backchannel_prompt(language: str = "en") -> str:
    """The recognizer's context while the agent speaks (the backchannels as they should be written)."""
    lists = turn_words(language)
    return lists.backchannel_prompt if lists is not None else ""
