"""Pronunciation lexicons (pure functions): ``{"word": "phonemes"}`` per request or per deployment.

Phonemes are in Kokoro's alphabet (misaki's: ``kˈOkəɹO``). A request's ``lexicon`` and the deployment's
file (``KOKORO_LEXICON``, a JSON object) are merged, the request's entries winning; a word matches exactly
or, failing that, case-insensitively. misaki's inline form ``[word](/phonemes/)`` in the text does the same
for one occurrence (English G2P reads it natively). Every phoneme string is checked against the model's
vocabulary first, so a typo is an ``invalid_request`` naming the word instead of silence.

English applies the lexicon to misaki's tokens (the words keep their text, so word timestamps still index
the text as sent); the other readers phonemize the text around each lexicon word and put the word's
phonemes between (:func:`phonemize_with_lexicon`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from strands_voice_protocol.errors import ConfigurationError

__all__ = [
    "INLINE_FORM",
    "Lexicon",
    "apply_to_tokens",
    "lexicon_problem",
    "load_lexicon_file",
    "phonemize_with_lexicon",
]

#: misaki's inline pronunciation: ``[word](/phonemes/)``.
INLINE_FORM: Final = re.compile(r"\[([^\[\]]+)\]\(/([^/()]*)/\)")
#: Symbols of the alphabet that are not sounds: a lexicon entry needs at least one other.
_NOT_SOUNDS: Final = frozenset(' !"(),.:;?—“”…')


class Lexicon(Mapping[str, str]):
    """Words → phonemes, looked up exactly, then case-insensitively.

    Args:
        entries: The words and their phonemes; later mappings override earlier ones.
    """

    def __init__(self, *entries: Mapping[str, str]) -> None:
        self._exact: dict[str, str] = {}
        for mapping in entries:
            self._exact.update(mapping)
        self._folded = {word.casefold(): phonemes for word, phonemes in self._exact.items()}

    def __getitem__(self, word: str) -> str:
        found = self.lookup(word)
        if found is None:
            raise KeyError(word)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._exact)

    def __len__(self) -> int:
        return len(self._exact)

    def lookup(self, word: str) -> str | None:
        """The phonemes of ``word`` (exact match first), or None."""
        found = self._exact.get(word)
        return found if found is not None else self._folded.get(word.casefold())


def lexicon_problem(lexicon: Mapping[str, str], text: str, alphabet: Iterable[str]) -> str | None:
    """Why the lexicon (or an inline ``[word](/phonemes/)`` in ``text``) cannot be spoken, or None.

    Args:
        lexicon: The merged lexicon of the request.
        text: The request's text (its inline forms are checked too).
        alphabet: The model's phoneme symbols.

    Returns:
        A message for the client naming the word, or None when every entry is speakable.
    """
    symbols = frozenset(alphabet)
    inline = ((match.group(1), match.group(2)) for match in INLINE_FORM.finditer(text))
    for word, phonemes in [*lexicon.items(), *inline]:
        unknown = sorted({symbol for symbol in phonemes if symbol not in symbols})
        if unknown:
            shown = "".join(unknown)
            return f"The phonemes for '{word}' use symbols the model does not have: '{shown}'."
        if not any(symbol not in _NOT_SOUNDS for symbol in phonemes):
            return f"The phonemes for '{word}' are empty."
    return None


def apply_to_tokens(tokens: list[Any], lexicon: Lexicon) -> bool:
    """Give misaki tokens whose text is a lexicon word the lexicon's phonemes.

    Returns:
        Whether any token changed (the caller then rebuilds the phoneme string).
    """
    changed = False
    for token in tokens:
        phonemes = lexicon.lookup(str(token.text))
        if phonemes is not None and token.phonemes != phonemes:
            token.phonemes = phonemes
            changed = True
    return changed


def _word_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    """Any of ``words``, longest first; an alphanumeric word only as a whole word (not inside another)."""
    alternatives = []
    for word in sorted(words, key=len, reverse=True):
        escaped = re.escape(word)
        alternatives.append(rf"(?<!\w){escaped}(?!\w)" if word.isascii() else escaped)
    return re.compile("|".join(alternatives), re.IGNORECASE) if alternatives else None


def phonemize_with_lexicon(text: str, lexicon: Mapping[str, str], phonemize: Callable[[str], str]) -> str:
    """Phonemize ``text`` with ``phonemize``, the lexicon's words (and inline forms) read as given.

    Japanese has no spaces between words, so a non-ASCII word matches anywhere; an ASCII word only whole.
    """
    table = lexicon if isinstance(lexicon, Lexicon) else Lexicon(lexicon)
    parts: list[str] = []
    pattern = _word_pattern(table)
    cursor = 0
    spans: list[tuple[int, int, str]] = [
        (match.start(), match.end(), match.group(2)) for match in INLINE_FORM.finditer(text)
    ]
    if pattern is not None:
        for match in pattern.finditer(text):
            if not any(start < match.end() and match.start() < end for start, end, _ in spans):
                spans.append((match.start(), match.end(), table.lookup(match.group(0)) or ""))
    for start, end, phonemes in sorted(spans):
        before = text[cursor:start]
        if before.strip():
            parts.append(phonemize(before))
        parts.append(phonemes)
        cursor = end
    rest = text[cursor:]
    if rest.strip() or not parts:
        parts.append(phonemize(rest))
    return " ".join(part.strip() for part in parts if part.strip())


def load_lexicon_file(path: str | Path) -> dict[str, str]:
    """A deployment lexicon: a JSON object of ``{"word": "phonemes"}``.

    Raises:
        ConfigurationError: the file cannot be read or is not such an object.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigurationError(f"cannot read the lexicon {path}: {error}") from None
    if not isinstance(data, dict) or not all(
        isinstance(word, str) and word.strip() and isinstance(phonemes, str)
        for word, phonemes in data.items()
    ):
        raise ConfigurationError(f'the lexicon {path} must be a JSON object of {{"word": "phonemes"}}')
    return {word.strip(): phonemes for word, phonemes in data.items()}


class WordlessReader:
    """A thread-safe reader over one misaki G2P that reports no word boundaries (espeak, Mandarin).

    Args:
        g2p: The misaki G2P: called with text, returns ``(phonemes, tokens)``; not thread-safe, so calls
            are serialized.
    """

    def __init__(self, g2p: Callable[[str], tuple[str | None, Any]]) -> None:
        self._g2p = g2p
        self._lock = threading.Lock()

    def _phonemize(self, text: str) -> str:
        with self._lock:
            phonemes, _ = self._g2p(text)
        return str(phonemes or "")

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence, the lexicon's words read as given (no tokens: no word boundaries)."""
        return phonemize_with_lexicon(text, lexicon or {}, self._phonemize), []
