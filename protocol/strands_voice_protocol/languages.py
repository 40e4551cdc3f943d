"""Kokoro's language letters, and the caller's language they name (sans-I/O).

Kokoro names a language by one letter, the first letter of its voices (``af_heart`` American English,
``jf_alpha`` Japanese); a request's ``lang`` picks one, else the (first) voice's letter does. The endpoint
reads the answer in that language; the app and the library hear the caller in it unless the call says
otherwise (``listen_lang``: a letter, or a BCP-47 tag such as ``ja-JP``).

:func:`hearing_language` reads either form into a :class:`Language`: the ISO 639-1 code speech recognizers
take (Whisper's ``language``), the BCP-47 tag Amazon Transcribe streaming takes (its ``LanguageCode``) and
the key of the turn words (``strands_voice.listen``'s lists).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "KOKORO_LANGUAGES",
    "Language",
    "answer_language",
    "hearing_language",
    "unspaced",
    "voice_language",
]


@dataclass(frozen=True)
class Language:
    """One language a caller may speak.

    Attributes:
        letter: Kokoro's letter (``j``).
        name: For a person (``Japanese``).
        code: ISO 639-1 (``ja``): Whisper's ``language``, and the key of the turn words.
        tag: BCP-47 with a region (``ja-JP``): Amazon Transcribe streaming's ``LanguageCode``.
    """

    letter: str
    name: str
    code: str
    tag: str


#: Kokoro's languages (PROTOCOL "Voices, languages, pronunciation"), by letter.
KOKORO_LANGUAGES: Final[dict[str, Language]] = {
    language.letter: language
    for language in (
        Language("a", "American English", "en", "en-US"),
        Language("b", "British English", "en", "en-GB"),
        Language("j", "Japanese", "ja", "ja-JP"),
        Language("z", "Mandarin Chinese", "zh", "zh-CN"),
        Language("e", "Spanish", "es", "es-US"),
        Language("f", "French", "fr", "fr-FR"),
        Language("h", "Hindi", "hi", "hi-IN"),
        Language("i", "Italian", "it", "it-IT"),
        Language("p", "Brazilian Portuguese", "pt", "pt-BR"),
    )
}
_BY_CODE: Final[dict[str, Language]] = {}
for _language in KOKORO_LANGUAGES.values():
    _BY_CODE.setdefault(_language.code, _language)  # "en" is American English (the first)
# Kana, CJK punctuation and ideographs, full-width forms: scripts written without spaces between words.
_UNSPACED: Final = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_TAG: Final = re.compile(r"([A-Za-z]{2,3})(?:-([A-Za-z0-9]{2,8}))*")


def voice_language(voice: str) -> str:
    """The letter of a voice spec: its (first) voice's first letter (``jf_alpha`` → ``j``)."""
    return voice.lstrip()[:1].lower()


def answer_language(lang: str | None, voice: str | None) -> str:
    """The letter the answer is read in, as the endpoint reads it before it sees the text: ``lang`` when
    given, else the (first) voice's letter.

    A voice whose letter is no Kokoro language (a custom name, or no voice) reads American English; so
    does a Japanese voice without ``lang`` (the endpoint reads text with no kana or kanji under it as
    American English: the offline packs' voices are Japanese and speak English by default), so a Japanese
    caller's call says ``lang: j`` (or ``listen_lang``).
    """
    if lang:
        return lang
    letter = voice_language(voice) if voice else ""
    return letter if letter in KOKORO_LANGUAGES and letter != "j" else "a"


def hearing_language(spec: str) -> Language | None:
    """The caller's language named by a Kokoro letter (``j``), an ISO 639-1 code (``ja``) or a BCP-47 tag
    (``ja-JP``, ``es-MX``); None: not one of Kokoro's languages.

    A tag keeps its own region for Transcribe (``es-MX`` stays ``es-MX``); a bare code takes the
    language's usual one (``ja`` → ``ja-JP``).
    """
    spec = spec.strip()
    if len(spec) == 1:
        return KOKORO_LANGUAGES.get(spec.lower())
    if not _TAG.fullmatch(spec):
        return None
    primary, _, rest = spec.partition("-")
    known = _BY_CODE.get(primary.lower())
    if known is None or not rest:
        return known
    region = rest.split("-")[-1]
    tag = f"{primary.lower()}-{region.upper() if len(region) == 2 else region}"
    same = next((lang for lang in KOKORO_LANGUAGES.values() if lang.tag == tag), None)
    return same or Language(known.letter, known.name, known.code, tag)


def unspaced(char: str) -> bool:
    """Whether ``char`` is of a script written without spaces between words (Japanese, Chinese)."""
    return bool(char) and _UNSPACED.fullmatch(char[0]) is not None
