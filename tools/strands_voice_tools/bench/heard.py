"""Time to first HEARD sound on the endpoint (issue 15): what a listener waits for, not the first byte.

On one WebSocket session, alternating trial by trial:

- a 44-character sentence and a 197-character sentence with no internal punctuation: time to first
  byte and time to first heard sound (:class:`~strands_voice_tools.audio_analysis.FirstHeard`), and how much
  silence precedes the first sound;
- two plain sentences in one message: the silence a listener hears between them (the longest run of
  10 ms windows at or below -40 dBFS between the first and the last sound).

:func:`bench_heard_steps` measures the same on one running endpoint in three configurations, so the docs
can show before/after for each step from one run: Kokoro's raw segments (the session asks ``?trim=0``,
whole-segment decoding), the silence policy (trimmed, whole-segment decoding), and the silence policy with
windowed decoding. Windowed decoding is switched on the engine object the endpoint serves from (the ONNX
engine's ``plan``); engines without it are measured as they are.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
from strands_voice_protocol.wire import SAMPLE_RATE
from websockets.asyncio.client import connect

from strands_voice_tools.audio_analysis import AUDIBLE_DBFS, AUDIBLE_WINDOW_S, pcm16_to_float
from strands_voice_tools.bench.endpoint_probe import RequestTiming, time_request
from strands_voice_tools.bench.stats import summarize
from strands_voice_tools.bench.texts import HEARD_LONG, HEARD_SHORT, HEARD_TWO_SENTENCES

__all__ = ["bench_heard", "bench_heard_steps", "heard_gaps_ms", "measure_heard"]

logger = logging.getLogger(__name__)

Progress = Callable[[str], None]


def heard_gaps_ms(
    pcm: bytes, sample_rate: int = SAMPLE_RATE
) -> tuple[float | None, float | None, float | None]:
    """Silence a listener hears in one request's audio: (before the first sound, longest inside, after).

    Silence is a run of 10 ms windows at or below -40 dBFS (the audibility threshold of
    :mod:`strands_voice_tools.audio_analysis`).
    """
    samples = pcm16_to_float(pcm)
    window = round(sample_rate * AUDIBLE_WINDOW_S)
    whole = len(samples) // window
    if whole == 0:
        return None, None, None
    frames = np.asarray(samples[: whole * window], dtype=np.float64).reshape(whole, window)
    loud = np.flatnonzero(np.mean(frames * frames, axis=1) > 10.0 ** (AUDIBLE_DBFS / 10.0))
    if not loud.size:
        return None, None, None
    step_ms = AUDIBLE_WINDOW_S * 1e3
    inside = float((np.diff(loud).max() - 1) * step_ms) if loud.size > 1 else 0.0
    return float(loud[0] * step_ms), inside, float((whole - 1 - loud[-1]) * step_ms)


async def measure_heard(
    ws_url: str,
    *,
    trials: int,
    warmups: int = 1,
    voice: str | None = None,
    query: str = "",
    progress: Progress | None = None,
    label: str = "",
) -> dict[str, Any]:
    """Measure short vs long first byte / first heard sound, and the gap between two sentences.

    Args:
        ws_url: The endpoint's bidirectional route.
        trials: Timed trials (after ``warmups`` untimed ones).
        warmups: Untimed rounds first.
        voice: The voice; the endpoint's default when None.
        query: Appended to the URL (session options such as ``?trim=0``).
        progress: Where progress lines go.
        label: Names this configuration in progress lines.
    """
    short: list[RequestTiming] = []
    long: list[RequestTiming] = []
    gaps: list[tuple[float | None, float | None, float | None]] = []
    async with connect(ws_url + query, max_size=None, open_timeout=10.0) as ws:
        for trial in range(warmups + trials):
            order = (HEARD_SHORT, HEARD_LONG) if trial % 2 == 0 else (HEARD_LONG, HEARD_SHORT)
            timings = {}
            for text in order:
                timing = await time_request(ws, text, voice=voice, cancel_after_first_audio=True)
                # The step the engine was already running when the cancel came finishes meanwhile.
                await asyncio.sleep(min(5.0, timing.heard_s or timing.ttfa_s))
                timings[text] = timing
            audio = bytearray()
            await time_request(ws, HEARD_TWO_SENTENCES, voice=voice, audio_sink=audio)
            if trial < warmups:
                continue
            short.append(timings[HEARD_SHORT])
            long.append(timings[HEARD_LONG])
            gaps.append(heard_gaps_ms(bytes(audio)))
            if progress is not None:
                progress(
                    f"heard{f' [{label}]' if label else ''} trial {trial - warmups + 1}/{trials}: "
                    f"short {_ms(short[-1].heard_s)} ms heard, long {_ms(long[-1].heard_s)} ms heard, "
                    f"gap {gaps[-1][1]} ms"
                )

    def times(runs: list[RequestTiming], key: str) -> dict[str, Any] | None:
        values = [getattr(run, key) * 1e3 for run in runs if getattr(run, key) is not None]
        return summarize(values) if values else None

    def gap(index: int) -> dict[str, Any] | None:
        values = [value for g in gaps if (value := g[index]) is not None]
        return summarize(values) if values else None

    figures: dict[str, Any] = {
        "query": query,
        "short_chars": len(HEARD_SHORT),
        "long_chars": len(HEARD_LONG),
        "short_ttfb_ms": times(short, "ttfa_s"),
        "short_heard_ms": times(short, "heard_s"),
        "long_ttfb_ms": times(long, "ttfa_s"),
        "long_heard_ms": times(long, "heard_s"),
        "lead_silence_ms": times(short + long, "sound_offset_s"),
        "two_sentences_lead_ms": gap(0),
        "sentence_gap_ms": gap(1),
        "two_sentences_trail_ms": gap(2),
    }
    short_heard = figures["short_heard_ms"]
    long_heard = figures["long_heard_ms"]
    figures["ratio_long_over_short_heard"] = (
        long_heard["median"] / short_heard["median"] if short_heard and long_heard else None
    )
    return figures


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.0f}"


async def bench_heard(
    ws_url: str, trials: int, warmups: int, voice: str | None, progress: Progress
) -> dict[str, Any]:
    """The heard section for the endpoint as it is configured."""
    return await measure_heard(ws_url, trials=trials, warmups=warmups, voice=voice, progress=progress)


#: The configurations :func:`bench_heard_steps` measures: (name, session query, windowed decoding).
STEPS: tuple[tuple[str, str, bool], ...] = (
    ("raw segments (before)", "?trim=0", False),
    ("silence policy", "", False),
    ("silence policy + windowed decoding", "", True),
)


async def bench_heard_steps(
    ws_url: str, engine: Any, trials: int, warmups: int, voice: str | None, progress: Progress
) -> dict[str, Any]:
    """Before/after for each step on one running endpoint (see the module docstring)."""
    plan = getattr(engine, "plan", None)
    steps: dict[str, Any] = {}
    try:
        for name, query, windowed in STEPS:
            if hasattr(engine, "plan"):
                engine.plan = plan if windowed else None
            steps[name] = await measure_heard(
                ws_url,
                trials=trials,
                warmups=warmups,
                voice=voice,
                query=query,
                progress=progress,
                label=name,
            )
            steps[name]["windowed"] = bool(windowed and plan is not None)
    finally:
        if hasattr(engine, "plan"):
            engine.plan = plan
    return {"steps": steps, "median_of": trials}
