"""Is a transcript what was said? A check of a recognizer's text against its audio (sans-I/O).

Whisper invents: on a short or unclear turn it can loop ("five five" written as "5" twenty times, a
sentence written three times) or write words over silence. faster-whisper's own guards (compression
ratio, no-speech probability) catch some; this check catches what is left, from the text and the audio
alone:

- a phrase of three or more words said again right after itself is a loop: the repeats are dropped
  (:func:`collapse_loops`);
- a word or a pair of words repeated more than :data:`MAX_RUN` times in a row is a loop whose length
  cannot be told: the text is not trusted;
- more words than the voiced audio can hold (:data:`MAX_WORDS_PER_S` a second of voice, plus
  :data:`SLACK_WORDS`), or a text whose zlib compression ratio is above :data:`MAX_COMPRESSION` (Whisper's
  own repetition test), is not trusted.

A text not trusted is never answered: the listener reports the turn as not recognized, and the caller is
asked to say it again.
"""

from __future__ import annotations

import itertools
import re
import zlib
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "MAX_COMPRESSION",
    "MAX_RUN",
    "MAX_WORDS_PER_S",
    "SLACK_WORDS",
    "Checked",
    "check_transcript",
    "collapse_loops",
    "repeats_a_word",
    "same_words",
    "voiced_seconds",
]

#: The most words a second of voiced audio holds (fast speech is about four).
MAX_WORDS_PER_S: Final = 5.0
#: Words allowed beyond that (a short turn's words are long for its voice).
SLACK_WORDS: Final = 3
#: The most times a word or a pair of words may follow itself ("no no no no" is four).
MAX_RUN: Final = 4
#: Whisper's compression ratio threshold (its default): a text more compressible than this repeats.
MAX_COMPRESSION: Final = 2.4
#: A text this short is not tested for compression (short texts do not compress).
_COMPRESSION_MIN_CHARS: Final = 40
_TOKEN: Final = re.compile(r"\S+")
_PLAIN: Final = re.compile(r"[^\w']+")


@dataclass(frozen=True)
class Checked:
    """A transcript after the check: its text (loops collapsed), whether to trust it, and why not."""

    text: str
    trusted: bool
    reason: str = ""


def _plain(token: str) -> str:
    return _PLAIN.sub("", token.lower())


def _plain_words(text: str) -> list[str]:
    """The words of ``text``, lowercase, punctuation dropped."""
    return [word for word in (_plain(token) for token in _TOKEN.findall(text)) if word]


def collapse_loops(text: str, min_words: int = 3) -> str:
    """``text`` without its loop: when everything from some word on repeats what was said from an earlier
    word (a phrase of ``min_words`` or more said again, whole or cut short, up to the end: how a decoder
    loops), that tail is dropped."""
    tokens = _TOKEN.findall(text)
    plain = [_plain(token) for token in tokens]
    count = len(plain)
    for start in range(min_words, count - min_words + 1):
        tail = plain[start:]
        for earlier in range(start - min_words + 1):
            if (
                plain[earlier] == tail[0]
                and plain[earlier : earlier + len(tail)] == tail
                and not _periodic(plain[earlier:start])
            ):
                return " ".join(tokens[:start])
    return text


def _periodic(words: list[str]) -> bool:
    """Whether ``words`` is a shorter phrase said again and again ("5 5 5", "1 2 1 2": a run, which
    :func:`check_transcript` judges, not a loop to cut)."""
    size = len(words)
    return any(size % period == 0 and words == words[:period] * (size // period) for period in range(1, size))


def _longest_run(plain: list[str]) -> int:
    """The most times in a row a word, or a pair of words, follows itself."""
    longest = 1
    for size in (1, 2):
        run = 1
        for index in range(size, len(plain) - size + 1, 1):
            if plain[index : index + size] == plain[index - size : index] and any(
                plain[index : index + size]
            ):
                run += 1
                longest = max(longest, run if size == 1 else (run + 1) // 2)
            else:
                run = 1
    return longest


def check_transcript(text: str, voiced_s: float) -> Checked:
    """Check ``text`` against ``voiced_s`` seconds of voiced audio (see the module docstring)."""
    collapsed = collapse_loops(text.strip())
    plain = _plain_words(collapsed)
    if not plain:
        return Checked(collapsed, True)
    if _longest_run(plain) > MAX_RUN:
        return Checked(collapsed, False, "a word repeats in a loop")
    allowed = SLACK_WORDS + MAX_WORDS_PER_S * voiced_s
    if len(plain) > allowed:
        return Checked(collapsed, False, f"{len(plain)} words for {voiced_s:.1f} s of voice")
    raw = collapsed.encode("utf-8")
    if len(raw) >= _COMPRESSION_MIN_CHARS and len(raw) / len(zlib.compress(raw)) > MAX_COMPRESSION:
        return Checked(collapsed, False, "the text repeats itself")
    return Checked(collapsed, True)


def repeats_a_word(text: str) -> bool:
    """Whether ``text`` says a word twice in a row ("5 5", "no, no"): where a recognizer may miscount."""
    plain = _plain_words(text)
    return any(first == second for first, second in itertools.pairwise(plain))


def same_words(first: str, second: str) -> bool:
    """Whether two transcripts say the same words (case and punctuation aside: "5, 5." is "5 5")."""
    return _plain_words(first) == _plain_words(second)


def voiced_seconds(audio: npt.NDArray[np.float32], rate: int = 16000) -> float:
    """Seconds of ``audio`` with voice in them: 20 ms frames louder than -50 dBFS and within 35 dB of the
    loudest frame."""
    frame = rate // 50
    count = audio.size // frame
    if count == 0:
        return 0.0
    frames = np.asarray(audio[: count * frame], dtype=np.float64).reshape(count, frame)
    level = 10 * np.log10(np.maximum(np.mean(frames**2, axis=1), 1e-12))
    voiced = (level > -50.0) & (level >= level.max() - 35.0)
    return float(np.count_nonzero(voiced)) * frame / rate
