"""Pure helpers for the benchmark's figures: summaries, playback stall, and text/audio alignment."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "PlaybackResult",
    "median_or_none",
    "percentile",
    "ratio",
    "simulate_playback",
    "summarize",
    "text_complete_index",
]


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks.

    Raises:
        ValueError: ``values`` is empty or ``q`` is outside [0, 100].
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 100.0:
        raise ValueError("q must be within [0, 100]")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median_or_none(values: Sequence[float]) -> float | None:
    """The median of ``values``, or None when there are none."""
    return statistics.median(values) if values else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing or the denominator is not positive."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


def summarize(values: Iterable[float]) -> dict[str, float | int | list[float]]:
    """Median, min, max, p95 and the raw trials (rounded to 3 decimals) of a list of figures.

    Raises:
        ValueError: no values.
    """
    trials = [float(v) for v in values]
    if not trials:
        raise ValueError("summary of no values")
    return {
        "median": statistics.median(trials),
        "min": min(trials),
        "max": max(trials),
        "p95": percentile(trials, 95.0),
        "n": len(trials),
        "trials": [round(v, 3) for v in trials],
    }


@dataclass(frozen=True, slots=True)
class PlaybackResult:
    """What a real-time player starting at the first audio would have experienced.

    Attributes:
        stall_s: Total time the player was starved (waiting for audio) before the end.
        stalls: How many separate gaps there were.
        end_s: When playback of the last chunk ends, on the arrival clock.
        segments: The stretches of continuous playback, ``(start_s, end_s)``.
    """

    stall_s: float
    stalls: int
    end_s: float
    segments: tuple[tuple[float, float], ...] = ()


def simulate_playback(chunks: Sequence[tuple[float, float]], *, tolerance_s: float = 0.0) -> PlaybackResult:
    """Play chunks in order in real time, starting when the first one arrives.

    Args:
        chunks: ``(arrival_s, duration_s)`` per audio chunk, in arrival order.
        tolerance_s: Gaps this short or shorter are not counted (timer noise), 0 by default.

    Returns:
        The total starved time, the number of gaps, and when playback ends. The starved time is also the
        shortest delay after the first arrival at which a player could start and never wait.
    """
    if not chunks:
        return PlaybackResult(stall_s=0.0, stalls=0, end_s=0.0)
    play_end = chunks[0][0]
    segment_start = play_end
    segments: list[tuple[float, float]] = []
    stall = 0.0
    stalls = 0
    for index, (arrival, duration) in enumerate(chunks):
        gap = arrival - play_end
        if index > 0 and gap > 0.0:
            segments.append((segment_start, play_end))
            segment_start = arrival
            if gap > tolerance_s:
                stall += gap
                stalls += 1
        play_end = max(play_end, arrival) + duration
    segments.append((segment_start, play_end))
    return PlaybackResult(stall_s=stall, stalls=stalls, end_s=play_end, segments=tuple(segments))


def _speech_chars(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def text_complete_index(deltas: Sequence[str], chunk: str) -> int | None:
    """Index of the text delta with which ``chunk`` had fully arrived.

    The chunk was cleaned for speech (Markdown and emoji removed), so matching uses letters and digits
    only, as an in-order subsequence of the streamed text: dropped symbols or link targets do not break it.

    Args:
        deltas: The text deltas in arrival order.
        chunk: The first text chunk the TTS was sent.

    Returns:
        The delta index, or None when the deltas never contain the chunk.
    """
    wanted = _speech_chars(chunk)
    if not wanted:
        return None
    position = 0
    for index, delta in enumerate(deltas):
        for ch in _speech_chars(delta):
            if ch == wanted[position]:
                position += 1
                if position == len(wanted):
                    return index
    return None
