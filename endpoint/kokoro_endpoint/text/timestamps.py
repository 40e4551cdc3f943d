"""Word timestamps (pure functions): from a segment's phoneme durations to words of the ORIGINAL text.

An engine reports, per segment, the G2P tokens it spoke, the phoneme string it sent to the model and the
model's duration frames per phoneme (:class:`~kokoro_endpoint.engines.speech.SegmentTiming`).
:func:`token_spans` lines the tokens up with the frames: a token starts where its first phoneme starts
and ends where its last one ends (pauses for punctuation and spaces fall between words).
:func:`segment_words` then maps each token back through the normalizer's char map to the text the
client sent, and merges the tokens that came from one written word ("$1.5M" is spoken as three tokens
and highlighted as one word).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from strands_voice_protocol.frames import WordTiming
from strands_voice_protocol.languages import unspaced

if TYPE_CHECKING:  # the engines package imports this module
    from kokoro_endpoint.engines.speech import SegmentTiming
    from kokoro_endpoint.text.normalized_text import NormalizedText

__all__ = ["TokenSpan", "segment_words", "shift_words", "token_spans"]


@dataclass(frozen=True, slots=True)
class TokenSpan:
    """A spoken token: its chars in the engine's input text and its time in the segment's audio."""

    char_start: int
    char_end: int
    start_s: float
    end_s: float


def _spoken(text: str) -> bool:
    return any(char.isalnum() for char in text)


def token_spans(timing: SegmentTiming, sample_rate: int) -> list[TokenSpan]:
    """The spoken tokens of one segment, with their chars and times.

    Args:
        timing: The engine's timing for the segment.
        sample_rate: Audio samples per second.

    Returns:
        One span per token that has letters or digits and phonemes, in order; char indices are into the
        engine's input text (``timing.text_start`` added), times are from the segment's first sample.
    """
    seconds_per_frame = timing.frame_samples / sample_rate
    elapsed = [timing.lead_frames]
    for frames in timing.frames:
        elapsed.append(elapsed[-1] + frames)
    spans: list[TokenSpan] = []
    phoneme_cursor = 0
    text_cursor = 0
    for token in timing.tokens:
        char_at = timing.text.find(token.text, text_cursor) if token.text else -1
        if char_at >= 0:
            text_cursor = char_at + len(token.text)
        if not token.phonemes:
            continue
        at = timing.phonemes.find(token.phonemes, phoneme_cursor)
        if at < 0:
            continue
        phoneme_cursor = at + len(token.phonemes)
        if char_at < 0 or not _spoken(token.text):
            continue
        start, end = elapsed[at], elapsed[phoneme_cursor]
        spans.append(
            TokenSpan(
                char_start=timing.text_start + char_at,
                char_end=timing.text_start + char_at + len(token.text),
                start_s=start * seconds_per_frame,
                end_s=max(end, start) * seconds_per_frame,
            )
        )
    return spans


def segment_words(spans: list[TokenSpan], offset: int, normalized: NormalizedText) -> list[WordTiming]:
    """Map token spans to words of the original text.

    Args:
        spans: Token spans whose chars index a piece of ``normalized.text``.
        offset: Where that piece starts in ``normalized.text``.
        normalized: The request's text, normalized, with its map to the original.

    Returns:
        Words in order, one per written word (tokens from the same whitespace-delimited original word are
        merged), ``char_*`` indexing ``normalized.original``, times from the segment's first sample.
    """
    original = normalized.original
    words: list[WordTiming] = []
    for span in spans:
        start, end = offset + span.char_start, offset + span.char_end
        if not 0 <= start < end <= len(normalized.text):
            continue
        char_start, char_end = normalized.source_span(start, end)
        if words and _same_written_word(original, words[-1], char_start):
            last = words[-1]
            char_start = min(char_start, last.char_start)
            char_end = max(char_end, last.char_end)
            words[-1] = WordTiming(
                original[char_start:char_end], last.start_s, max(span.end_s, last.end_s), char_start, char_end
            )
            continue
        words.append(
            WordTiming(original[char_start:char_end], span.start_s, span.end_s, char_start, char_end)
        )
    return words


def _same_written_word(original: str, previous: WordTiming, char_start: int) -> bool:
    """Whether a token starting at ``char_start`` belongs to the written word ``previous`` covers.

    Japanese and Chinese are written without spaces: there each token the reader found is a word.
    """
    if char_start < previous.char_end:
        return True
    between = original[previous.char_end : char_start]
    if unspaced(original[previous.char_end - 1 : previous.char_end]) or unspaced(original[char_start:][:1]):
        return False
    return not any(char.isspace() for char in between) and not _breaks_words(between)


def _breaks_words(between: str) -> bool:
    # "well—known" and "A/B" stay one written word; a comma or a closing bracket ends one.
    return any(char in ',;:!?)]}"”' for char in between)


def shift_words(words: list[WordTiming], seconds: float) -> tuple[WordTiming, ...]:
    """The words with ``seconds`` added to their times, rounded to 1 ms, never before 0.

    Used both ways: to move segment times onto the trimmed audio that carries them (a negative shift, for
    the silence cut from the segment's start) and to move them onto the request's timeline (the audio
    already sent).
    """
    return tuple(
        WordTiming(
            w.word,
            max(0.0, round(w.start_s + seconds, 3)),
            max(0.0, round(w.end_s + seconds, 3)),
            w.char_start,
            w.char_end,
        )
        for w in words
    )
