"""Time to first HEARD sound on the endpoint: what a listener waits for, not the first byte.

On one WebSocket session, alternating trial by trial:

- a 44-character sentence and a 197-character sentence with no internal punctuation: time to first
  byte and time to first heard sound (:class:`~strands_voice_tools.audio_analysis.FirstHeard`), and how much
  silence precedes the first sound;
- a barge-in: the long sentence cancelled at its first heard sound and the short one sent at once (the
  first heard sound of an answer that follows an interrupted one: the cancelled request's running step
  must not hold the engine);
- two plain sentences in one message: the silence a listener hears between them (the longest run of
  10 ms windows at or below -40 dBFS between the first and the last sound), and whether the audio came in
  time: how long a real-time player starting at the first byte would wait for audio (which is also how
  much later it would have to start to never wait: a first sound that comes early but stalls right after
  is no win on a CPU that decodes about as fast as it plays).

:func:`bench_heard_steps` measures the same on one running endpoint in four configurations, alternated
trial by trial, so the docs can show before/after for each step from one run: Kokoro's raw segments (the
session asks ``?trim=0``, whole-segment decoding), the silence policy (trimmed, whole-segment decoding),
the silence policy with the first windowed decoding plan (a 20-frame first window, sentences encoded whole),
and with the engine's own plan (a smaller first window, a long sentence's head encoded alone).
The plan is switched on the engine object the endpoint serves from (the ONNX engine's ``plan``); engines
without one are measured as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import numpy as np
from kokoro_endpoint.engines.onnx.windows import WindowPlan
from strands_voice_protocol.wire import SAMPLE_RATE
from websockets.asyncio.client import connect

from strands_voice_tools.audio_analysis import AUDIBLE_DBFS, AUDIBLE_WINDOW_S, pcm16_to_float
from strands_voice_tools.bench.endpoint_probe import RequestTiming, time_request
from strands_voice_tools.bench.stats import summarize
from strands_voice_tools.bench.texts import HEARD_LONG, HEARD_SHORT, HEARD_TWO_SENTENCES

__all__ = [
    "STEPS",
    "WHOLE_SENTENCE_PLAN",
    "HeardStep",
    "bench_heard",
    "bench_heard_steps",
    "heard_gaps_ms",
    "measure_heard",
]

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


@dataclass
class _HeardRuns:
    """One configuration's timed trials: short, long and the two-sentence gaps."""

    short: list[RequestTiming] = field(default_factory=list)
    long: list[RequestTiming] = field(default_factory=list)
    gaps: list[tuple[float | None, float | None, float | None]] = field(default_factory=list)
    played: list[RequestTiming] = field(default_factory=list)  # the two sentences, played through
    after_cancel: list[RequestTiming] = field(default_factory=list)  # the short one, after a barge-in


_Trial = tuple[RequestTiming, RequestTiming, RequestTiming, RequestTiming, bytes]


async def _heard_trial(ws: Any, trial: int, voice: str | None) -> _Trial:
    """One trial on an open session: short and long (order alternating by trial), the barge-in pair, then
    two sentences."""
    order = (HEARD_SHORT, HEARD_LONG) if trial % 2 == 0 else (HEARD_LONG, HEARD_SHORT)
    timings = {}
    for text in order:
        timing = await time_request(ws, text, voice=voice, cancel_after_first_audio=True)
        # A pause before the next request, as a listener's next question would come (the cancel stops the
        # engine's running step at once; the barge-in pair below measures the next request without one).
        await asyncio.sleep(min(5.0, timing.heard_s or timing.ttfa_s))
        timings[text] = timing
    # A barge-in: the long sentence cancelled at its first sound, the short one sent at once.
    await time_request(ws, HEARD_LONG, voice=voice, cancel_after_first_audio=True)
    after_cancel = await time_request(ws, HEARD_SHORT, voice=voice, cancel_after_first_audio=True)
    await asyncio.sleep(min(5.0, after_cancel.heard_s or after_cancel.ttfa_s))
    audio = bytearray()
    played = await time_request(ws, HEARD_TWO_SENTENCES, voice=voice, audio_sink=audio)
    return timings[HEARD_SHORT], timings[HEARD_LONG], after_cancel, played, bytes(audio)


def _record(runs: _HeardRuns, trial: _Trial) -> str:
    """Keep one trial's figures; its progress line."""
    short, long, after_cancel, played, audio = trial
    runs.short.append(short)
    runs.long.append(long)
    runs.after_cancel.append(after_cancel)
    runs.played.append(played)
    runs.gaps.append(heard_gaps_ms(audio))
    return (
        f"short {_ms(short.heard_s)} ms heard ({_ms(after_cancel.heard_s)} after a cancel), "
        f"long {_ms(long.heard_s)} ms heard, gap {runs.gaps[-1][1]} ms, stall {_ms(played.stall_s)} ms"
    )


def _figures(runs: _HeardRuns, query: str) -> dict[str, Any]:
    """The summaries of one configuration's trials."""

    def times(timings: list[RequestTiming], key: str) -> dict[str, Any] | None:
        values = [getattr(run, key) * 1e3 for run in timings if getattr(run, key) is not None]
        return summarize(values) if values else None

    def gap(index: int) -> dict[str, Any] | None:
        values = [value for g in runs.gaps if (value := g[index]) is not None]
        return summarize(values) if values else None

    figures: dict[str, Any] = {
        "query": query,
        "short_chars": len(HEARD_SHORT),
        "long_chars": len(HEARD_LONG),
        "short_ttfb_ms": times(runs.short, "ttfa_s"),
        "short_heard_ms": times(runs.short, "heard_s"),
        "short_after_cancel_heard_ms": times(runs.after_cancel, "heard_s"),
        "long_ttfb_ms": times(runs.long, "ttfa_s"),
        "long_heard_ms": times(runs.long, "heard_s"),
        "lead_silence_ms": times(runs.short + runs.long, "sound_offset_s"),
        "two_sentences_lead_ms": gap(0),
        "sentence_gap_ms": gap(1),
        "two_sentences_trail_ms": gap(2),
        "two_sentences_heard_ms": times(runs.played, "heard_s"),
        "two_sentences_stall_ms": times(runs.played, "stall_s"),
    }
    short_heard = figures["short_heard_ms"]
    long_heard = figures["long_heard_ms"]
    figures["ratio_long_over_short_heard"] = (
        long_heard["median"] / short_heard["median"] if short_heard and long_heard else None
    )
    return figures


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
    runs = _HeardRuns()
    async with connect(ws_url + query, max_size=None, open_timeout=10.0) as ws:
        for trial in range(warmups + trials):
            result = await _heard_trial(ws, trial, voice)
            if trial < warmups:
                continue
            line = _record(runs, result)
            if progress is not None:
                progress(
                    f"heard{f' [{label}]' if label else ''} trial {trial - warmups + 1}/{trials}: {line}"
                )
    return _figures(runs, query)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.0f}"


async def bench_heard(
    ws_url: str, trials: int, warmups: int, voice: str | None, progress: Progress
) -> dict[str, Any]:
    """The heard section for the endpoint as it is configured."""
    return await measure_heard(ws_url, trials=trials, warmups=warmups, voice=voice, progress=progress)


#: The window plan before the first window was cut: a 20-frame first window with 8 frames of right
#: context, and every sentence's encoder run whole.
WHOLE_SENTENCE_PLAN: Final = WindowPlan(first=20, first_context=8, head_phonemes=0)


@dataclass(frozen=True)
class HeardStep:
    """One configuration of :func:`bench_heard_steps`.

    Attributes:
        name: Its column in the table.
        query: The session's options (``?trim=0``: Kokoro's raw segments).
        plan: The engine's window plan while it runs: ``"engine"`` keeps the engine's own (as loaded),
            None decodes segments whole, a :class:`WindowPlan` replaces it.
    """

    name: str
    query: str
    plan: WindowPlan | Literal["engine"] | None


#: The configurations :func:`bench_heard_steps` measures, each step's before/after in one run.
STEPS: Final = (
    HeardStep("raw segments (before)", "?trim=0", None),
    HeardStep("silence policy", "", None),
    HeardStep("windowed, 20-frame first window", "", WHOLE_SENTENCE_PLAN),
    HeardStep("windowed, first window cut", "", "engine"),
)


async def bench_heard_steps(
    ws_url: str, engine: Any, trials: int, warmups: int, voice: str | None, progress: Progress
) -> dict[str, Any]:
    """Before/after for each step on one running endpoint (see the module docstring).

    The configurations alternate trial by trial (forward, then backward), each on its own session, so a
    change in the machine's load reaches all of them alike.
    """
    plan = getattr(engine, "plan", None)
    switchable = hasattr(engine, "plan")
    runs = {step.name: _HeardRuns() for step in STEPS}
    try:
        async with contextlib.AsyncExitStack() as stack:
            sessions = [
                await stack.enter_async_context(
                    connect(ws_url + step.query, max_size=None, open_timeout=10.0)
                )
                for step in STEPS
            ]
            for trial in range(warmups + trials):
                order = list(zip(STEPS, sessions, strict=True))
                for step, ws in order if trial % 2 == 0 else reversed(order):
                    if switchable:
                        engine.plan = plan if step.plan == "engine" else step.plan
                    result = await _heard_trial(ws, trial, voice)
                    if trial >= warmups:
                        line = _record(runs[step.name], result)
                        progress(f"heard [{step.name}] trial {trial - warmups + 1}/{trials}: {line}")
    finally:
        if switchable:
            engine.plan = plan
    steps: dict[str, Any] = {}
    for step in STEPS:
        steps[step.name] = _figures(runs[step.name], step.query)
        steps[step.name]["windowed"] = (
            switchable and (plan if step.plan == "engine" else step.plan) is not None
        )
    return {"steps": steps, "median_of": trials, "alternated": True}
