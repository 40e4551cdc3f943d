"""The benchmark itself: five sections measured on one running stack, each figure a median of trials.

1. TTS only: one 267-character message vs its first sentence, straight to the endpoint.
2. End to end: the example app over SSE, bidi vs batch, with the scripted model's fixed pacing; and
   bidi's overhead over the floor (first chunk's text complete + the engine's own time for it, as the
   engine ran in that trial; also against the engine timed alone).
3. Playback stall: a real-time player starting at the first audio, fed by each run's arrivals.
4. Payload: Leg 3 bytes per second of audio for pcm16 (base64), mp3 and opus, against raw PCM.
5. Concurrency: p50/p95 TTFA with 1, 2, 4 and 8 sessions at once on the endpoint.
6. Heard: time to first heard sound (first 10 ms window above -40 dBFS, on a player starting with the
   first byte) for a 44-character vs a 197-character unpunctuated sentence, the silence before the first
   sound and between two sentences (:mod:`strands_voice_tools.bench.heard`).
"""

from __future__ import annotations

import datetime
import logging
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

import httpx
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.leg3_client import ModeResult

from strands_voice_tools.bench.app_probe import run_voice_request
from strands_voice_tools.bench.endpoint_probe import measure_concurrent, measure_request
from strands_voice_tools.bench.engine_probe import EngineCall, engine_first_segment_ms
from strands_voice_tools.bench.heard import bench_heard
from strands_voice_tools.bench.machine import describe_machine, load_average
from strands_voice_tools.bench.stack import BenchStack
from strands_voice_tools.bench.stats import percentile, simulate_playback, summarize, text_complete_index
from strands_voice_tools.bench.texts import BENCH_TEXT, CONCURRENCY_TEXT, FIRST_SENTENCE, PROMPT

__all__ = [
    "PCM16_BYTES_PER_SECOND",
    "QUICK_ANSWER",
    "SCHEMA",
    "TARGETS",
    "BenchConfig",
    "Progress",
    "evaluate_targets",
    "run_benchmark",
]

logger = logging.getLogger(__name__)

SCHEMA: Final = "strands-voice-bench/2"
#: Raw pcm16 mono at 24 kHz.
PCM16_BYTES_PER_SECOND: Final = 48_000

#: The issue's targets: name -> (comparison, threshold, what it is).
TARGETS: Final[dict[str, tuple[str, float, str]]] = {
    "e2e_ttfa_ratio_batch_over_bidi": (">=", 5.0, "end-to-end TTFA ratio batch/bidi"),
    "tts_only_ratio_whole_over_first": ("<=", 1.15, "TTS-only TTFA whole text / first sentence"),
    "bidi_overhead_over_floor_ms": ("<=", 30.0, "bidi overhead over the floor (ms)"),
    "bidi_playback_stall_s": ("<=", 0.0, "bidi playback stall (s)"),
    "opus_share_of_pcm16": ("<=", 0.12, "opus bytes / base64 pcm16 bytes on Leg 3"),
    "heard_ratio_long_over_short": ("<=", 1.3, "first heard sound, 197-char / 44-char sentence"),
    "heard_lead_silence_ms": ("<=", 30.0, "silence before a request's first sound (ms)"),
    "heard_sentence_gap_ms": ("<=", 500.0, "silence heard between two sentences (ms)"),
    "bidi_heard_over_floor_ms": (
        "<=",
        50.0,
        "bidi first heard sound over text complete + engine's first window (ms)",
    ),
}

#: The quick form's scripted answer: two plain sentences, about 10 s of speech.
QUICK_ANSWER: Final = (
    "Here's a quick overview of the Premium plan, which suits most households well. "
    "It costs $24.99 per month, and you can cancel at any time without a fee."
)

#: Where progress lines go (stderr in the CLI).
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BenchConfig:
    """How much to measure.

    Attributes:
        quick: The CI smoke form (fewer trials, fewer concurrency levels, a shorter scripted answer).
        trials: Timed trials per figure (after the warm-up).
        warmups: Untimed warm-up rounds before the TTS-only and engine trials.
        concurrency_levels: Concurrent session counts.
        concurrency_rounds: Rounds per level (each round is one request per session).
        payload_formats: Encoded formats measured on Leg 3 besides pcm16; these runs are also the
            end-to-end warm-up.
        voice: The voice for TTS-only and engine figures; the engine's default when None.
        answer_text: The scripted model's answer; its built-in multi-paragraph answer when None.
    """

    quick: bool = False
    trials: int = 5
    warmups: int = 1
    concurrency_levels: tuple[int, ...] = (1, 2, 4, 8)
    concurrency_rounds: int = 5
    payload_formats: tuple[str, ...] = ("mp3", "opus")
    voice: str | None = None
    answer_text: str | None = None

    @classmethod
    def quick_form(cls) -> BenchConfig:
        """The CI smoke form: 2 trials, levels 1 and 2, one round each, a 2-sentence scripted answer.

        The shorter answer keeps the same pacing (first sentence at 0.6 s, all text at 5.0 s) but needs a
        third of the synthesis, which is what a 2-core CI runner can afford.
        """
        return cls(
            quick=True,
            trials=2,
            warmups=1,
            concurrency_levels=(1, 2),
            concurrency_rounds=1,
            answer_text=QUICK_ANSWER,
        )


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


async def bench_tts_only(stack: BenchStack, config: BenchConfig, progress: Progress) -> dict[str, Any]:
    """TTS only: the whole four-sentence text as one message vs its first sentence, alternated.

    The whole text is cancelled once its first audio arrives: only its time to first audio is wanted,
    and synthesizing three more sentences per trial would only make the benchmark slower.
    """
    voice = config.voice

    whole_heard: list[float] = []
    first_heard: list[float] = []

    async def whole_text() -> float:
        timing = await measure_request(stack.ws_url, BENCH_TEXT, voice=voice, cancel_after_first_audio=True)
        if timing.heard_s is not None:
            whole_heard.append(timing.heard_s * 1e3)
        return timing.ttfa_s * 1e3

    async def first_sentence() -> tuple[float, float | None]:
        timing = await measure_request(stack.ws_url, FIRST_SENTENCE, voice=voice)
        rtf = timing.server_elapsed_s / timing.audio_duration_s if timing.audio_duration_s > 0 else None
        if timing.heard_s is not None:
            first_heard.append(timing.heard_s * 1e3)
        return timing.ttfa_s * 1e3, rtf

    for _ in range(config.warmups):
        await whole_text()
        await first_sentence()
    whole_heard.clear()
    first_heard.clear()
    whole: list[float] = []
    first: list[float] = []
    rtf: list[float] = []
    for trial in range(config.trials):
        # Alternate which goes first, so neither always follows the other's leftovers.
        order = ("whole", "first") if trial % 2 == 0 else ("first", "whole")
        for which in order:
            if which == "whole":
                whole.append(await whole_text())
            else:
                ttfa, factor = await first_sentence()
                first.append(ttfa)
                if factor is not None:
                    rtf.append(factor)
        progress(
            f"tts-only trial {trial + 1}/{config.trials}: whole {whole[-1]:.0f} ms, first {first[-1]:.0f} ms"
        )
    whole_median = _median(whole)
    first_median = _median(first)
    return {
        "text_chars": len(BENCH_TEXT),
        "sentences": 4,
        "first_sentence_chars": len(FIRST_SENTENCE),
        "whole_ttfa_ms": summarize(whole),
        "first_sentence_ttfa_ms": summarize(first),
        "ratio_whole_over_first": _ratio(whole_median, first_median),
        "whole_heard_ms": summarize(whole_heard) if whole_heard else None,
        "first_sentence_heard_ms": summarize(first_heard) if first_heard else None,
        # Endpoint time / audio time for the first sentence: below 1 means faster than real time.
        "first_sentence_real_time_factor": _median(rtf),
        "blog_reference_ms": {"whole": 329.3, "first_sentence": 156.7, "ratio": 2.1},
    }


def _first_chunk_times(run: ModeResult) -> tuple[str, float, float] | None:
    """The first text chunk and when its text had fully arrived: (text, server t_ms, client arrival s)."""
    if 0 not in run.sentences:
        return None
    chunk = run.sentences[0][0]
    index = text_complete_index([delta.text for delta in run.texts], chunk)
    if index is None:
        return None
    return chunk, run.texts[index].t_ms, run.texts[index].arrival_s


def _pcm_playback(run: ModeResult) -> tuple[float, int, tuple[tuple[float, float], ...]]:
    chunks = [(chunk.arrival_s, chunk.audio_bytes / PCM16_BYTES_PER_SECOND) for chunk in run.audio]
    result = simulate_playback(chunks)
    return result.stall_s, result.stalls, result.segments


def _timeline(run: ModeResult) -> dict[str, Any]:
    """The arrival data the plot draws, for one run (pcm16)."""
    text: list[list[float]] = []
    chars = 0
    for delta in run.texts:
        chars += len(delta.text)
        text.append([round(delta.arrival_s, 4), delta.t_ms, chars])
    audio: list[list[float]] = []
    seconds = 0.0
    for chunk in run.audio:
        seconds += chunk.audio_bytes / PCM16_BYTES_PER_SECOND
        audio.append([round(chunk.arrival_s, 4), chunk.t_ms, round(seconds, 4), chunk.sentence])
    stall, stalls, segments = _pcm_playback(run)
    first = _first_chunk_times(run)
    return {
        "ttfa_s": run.first_audio_s,
        "heard_s": run.first_heard_s,
        "first_chunk_text_complete_s": None if first is None else first[2],
        "text": text,
        "audio": audio,
        "playback": [[round(start, 4), round(end, 4)] for start, end in segments],
        "stall_s": stall,
        "stalls": stalls,
        "total_s": run.total_s,
    }


def _representative(runs: Sequence[ModeResult]) -> ModeResult:
    """The run whose TTFA is closest to the median: the one the plot shows."""
    ttfas = [run.first_audio_s or 0.0 for run in runs]
    middle = statistics.median(ttfas)
    return min(runs, key=lambda run: abs((run.first_audio_s or 0.0) - middle))


def _check_run(run: ModeResult) -> None:
    if run.errors:
        codes = ", ".join(error["code"] for error in run.errors)
        raise StrandsVoiceError(f"the {run.mode} ({run.format}) answer reported errors: {codes}")
    if run.problems:
        problems = "; ".join(run.problems)
        raise StrandsVoiceError(f"the {run.mode} ({run.format}) answer could not be read: {problems}")
    if not run.audio:
        raise StrandsVoiceError(f"the {run.mode} ({run.format}) answer carried no audio")


def _payload_figures(run: ModeResult) -> dict[str, Any]:
    duration = (run.audio_end["duration_s"] if run.audio_end else 0.0) or sum(
        duration for _text, duration in run.sentences.values()
    )
    if duration <= 0:
        raise StrandsVoiceError(f"the {run.format} answer reported no audio duration")
    return {
        "audio_s": round(duration, 3),
        "audio_event_bytes": run.audio_wire_bytes,
        "encoded_audio_bytes": sum(chunk.audio_bytes for chunk in run.audio),
        "bytes_per_audio_s": run.audio_wire_bytes / duration,
        "response_bytes_per_audio_s": run.response_bytes / duration,
        "ratio_to_raw_pcm": run.audio_wire_bytes / duration / PCM16_BYTES_PER_SECOND,
    }


async def bench_end_to_end(
    stack: BenchStack, config: BenchConfig, progress: Progress
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """End to end through the app: payload runs (also the warm-up), then bidi/batch trials alternated.

    Returns:
        The ``end_to_end``, ``playback`` and ``payload`` sections.
    """
    payload_runs: dict[str, ModeResult] = {}
    bidi: list[ModeResult] = []
    batch: list[ModeResult] = []
    # Each bidi run's first engine call: its first chunk's synthesis as the engine ran it in that trial.
    bidi_engine: list[EngineCall | None] = []
    # Generous: on a busy machine one answer can take minutes; a quiet one needs about 15 s.
    timeout = httpx.Timeout(30.0, read=300.0)
    async with httpx.AsyncClient(timeout=timeout) as client:
        for audio_format in config.payload_formats:
            run = await run_voice_request(
                client, stack.app_url, PROMPT, mode="bidi", audio_format=audio_format
            )
            _check_run(run)
            payload_runs[audio_format] = run
            progress(
                f"payload/warm-up {audio_format}: {run.audio_wire_bytes} audio bytes in {run.total_s:.1f} s"
            )
        for trial in range(config.trials):
            order = ("bidi", "batch") if trial % 2 == 0 else ("batch", "bidi")
            for mode in order:
                calls_before = len(stack.timed.calls)
                run = await run_voice_request(client, stack.app_url, PROMPT, mode=mode)
                _check_run(run)
                (bidi if mode == "bidi" else batch).append(run)
                if mode == "bidi":
                    calls = stack.timed.calls[calls_before:]
                    bidi_engine.append(calls[0] if calls else None)
            progress(
                f"end-to-end trial {trial + 1}/{config.trials}: "
                f"bidi {(bidi[-1].first_audio_s or 0) * 1e3:.0f} ms, "
                f"batch {(batch[-1].first_audio_s or 0) * 1e3:.0f} ms"
            )

    # The engine alone, on an otherwise idle process, on the first chunk's text.
    first = _first_chunk_times(bidi[0])
    first_chunk = first[0] if first is not None else None
    engine_ms: list[float] = []
    if first_chunk is not None:
        voice = config.voice or str(stack.engine.default_voice)
        engine_ms = engine_first_segment_ms(
            stack.engine, first_chunk, voice=voice, trials=config.trials, warmups=config.warmups
        )
    engine_median = _median(engine_ms)
    # The floor of each bidi trial: the moment its first chunk's text was complete plus the engine's own
    # time for that chunk IN THAT TRIAL (recorded by TimedEngine, under the trial's CPU load). The same
    # sum with the idle engine time is reported too: it mixes in how much the shared CPU slowed the engine.
    overhead: list[float] = []
    overhead_idle: list[float] = []
    overhead_idle_client: list[float] = []
    text_complete: list[float] = []
    trial_engine_ms: list[float] = []
    before_engine_ms: list[float] = []
    after_engine_ms: list[float] = []
    for run, call in zip(bidi, bidi_engine, strict=True):
        times = _first_chunk_times(run)
        if times is None or run.server_ttfa_ms is None or run.first_audio_s is None:
            continue
        _chunk, t_ms, arrival_s = times
        text_complete.append(t_ms)
        if engine_median is not None:
            overhead_idle.append(run.server_ttfa_ms - t_ms - engine_median)
            overhead_idle_client.append((run.first_audio_s - arrival_s) * 1e3 - engine_median)
        if call is not None:
            trial_engine_ms.append(call.first_segment_s * 1e3)
            overhead.append(run.server_ttfa_ms - t_ms - call.first_segment_s * 1e3)
            # Where the rest went, on the client's clock: text complete -> engine starts, and engine
            # done -> first audio at the client.
            before_engine_ms.append((call.started - run.started_at - arrival_s) * 1e3)
            after_engine_ms.append((run.started_at + run.first_audio_s - call.finished) * 1e3)

    # Time to first heard sound: from the first chunk's text to the listener hearing it, over the
    # engine's own time to its first window of that chunk in the same trial.
    heard_over_floor: list[float] = []
    for run, call in zip(bidi, bidi_engine, strict=True):
        times = _first_chunk_times(run)
        if times is not None and call is not None and run.first_heard_s is not None:
            heard_over_floor.append((run.first_heard_s - times[2]) * 1e3 - call.first_segment_s * 1e3)
    bidi_heard = [run.first_heard_s * 1e3 for run in bidi if run.first_heard_s is not None]
    batch_heard = [run.first_heard_s * 1e3 for run in batch if run.first_heard_s is not None]
    bidi_ttfa = [(run.first_audio_s or 0.0) * 1e3 for run in bidi]
    batch_ttfa = [(run.first_audio_s or 0.0) * 1e3 for run in batch]
    end_to_end: dict[str, Any] = {
        "workload": {
            "model": "ScriptedModel(first_sentence_s=0.6, total_s=5.0)",
            "answer": "quick (2 sentences)" if config.answer_text else "SCRIPTED_ANSWER",
            "prompt": PROMPT,
            "answer_chars": sum(len(delta.text) for delta in bidi[0].texts),
            "audio_s": bidi[0].audio_end["duration_s"] if bidi[0].audio_end else None,
            "sentences": len(bidi[0].sentences),
        },
        "bidi_ttfa_ms": summarize(bidi_ttfa),
        "batch_ttfa_ms": summarize(batch_ttfa),
        "bidi_server_ttfa_ms": summarize(run.server_ttfa_ms or 0.0 for run in bidi),
        "batch_server_ttfa_ms": summarize(run.server_ttfa_ms or 0.0 for run in batch),
        "ratio_batch_over_bidi": _ratio(_median(batch_ttfa), _median(bidi_ttfa)),
        "bidi_heard_ms": summarize(bidi_heard) if bidi_heard else None,
        "batch_heard_ms": summarize(batch_heard) if batch_heard else None,
        "bidi_heard_over_floor_ms": summarize(heard_over_floor) if heard_over_floor else None,
        "first_chunk_text": first_chunk,
        "first_chunk_text_complete_ms": summarize(text_complete) if text_complete else None,
        "engine_first_segment_ms": summarize(engine_ms) if engine_ms else None,
        "engine_first_segment_in_trial_ms": summarize(trial_engine_ms) if trial_engine_ms else None,
        "bidi_overhead_over_floor_ms": summarize(overhead) if overhead else None,
        "bidi_text_complete_to_engine_start_ms": summarize(before_engine_ms) if before_engine_ms else None,
        "bidi_engine_done_to_client_audio_ms": summarize(after_engine_ms) if after_engine_ms else None,
        "bidi_overhead_over_idle_floor_ms": summarize(overhead_idle) if overhead_idle else None,
        "bidi_overhead_over_idle_floor_client_ms": (
            summarize(overhead_idle_client) if overhead_idle_client else None
        ),
        "timelines": {"bidi": _timeline(_representative(bidi)), "batch": _timeline(_representative(batch))},
    }

    bidi_stalls = [_pcm_playback(run)[0] for run in bidi]
    batch_stalls = [_pcm_playback(run)[0] for run in batch]
    playback = {
        "bidi_stall_s": summarize(bidi_stalls),
        "batch_stall_s": summarize(batch_stalls),
        "bidi_stall_count": summarize(_pcm_playback(run)[1] for run in bidi),
        "batch_stall_count": summarize(_pcm_playback(run)[1] for run in batch),
        "bidi_trials_with_stall": sum(1 for stall in bidi_stalls if stall > 0),
    }

    formats: dict[str, Any] = {}
    pcm_figures = [_payload_figures(run) for run in bidi]
    pcm = min(
        pcm_figures,
        key=lambda fig: abs(
            fig["bytes_per_audio_s"] - statistics.median(f["bytes_per_audio_s"] for f in pcm_figures)
        ),
    )
    formats["pcm16"] = pcm
    for audio_format, run in payload_runs.items():
        formats[audio_format] = _payload_figures(run)
    payload: dict[str, Any] = {
        "raw_pcm_bytes_per_s": PCM16_BYTES_PER_SECOND,
        "formats": formats,
        "opus_share_of_pcm16": (
            formats["opus"]["bytes_per_audio_s"] / pcm["bytes_per_audio_s"] if "opus" in formats else None
        ),
        "mp3_share_of_pcm16": (
            formats["mp3"]["bytes_per_audio_s"] / pcm["bytes_per_audio_s"] if "mp3" in formats else None
        ),
    }
    return end_to_end, playback, payload


async def bench_concurrency(stack: BenchStack, config: BenchConfig, progress: Progress) -> dict[str, Any]:
    """p50/p95 TTFA with N sessions synthesizing at once on the endpoint."""
    levels: dict[str, Any] = {}
    for sessions in config.concurrency_levels:
        ttfa: list[float] = []
        error: str | None = None
        for _round in range(config.concurrency_rounds):
            try:
                timings = await measure_concurrent(
                    stack.ws_url, CONCURRENCY_TEXT, sessions, voice=config.voice
                )
            except StrandsVoiceError as failure:  # e.g. `busy`: a finding to report, not a crash
                error = str(failure)
                break
            ttfa.extend(timing.ttfa_s * 1e3 for timing in timings)
        levels[str(sessions)] = {
            "sessions": sessions,
            "samples": len(ttfa),
            "p50_ms": percentile(ttfa, 50.0) if ttfa else None,
            "p95_ms": percentile(ttfa, 95.0) if ttfa else None,
            "max_ms": max(ttfa) if ttfa else None,
            "error": error,
        }
        progress(
            f"concurrency {sessions}: p50 {levels[str(sessions)]['p50_ms'] or float('nan'):.0f} ms, "
            f"p95 {levels[str(sessions)]['p95_ms'] or float('nan'):.0f} ms" + (f" ({error})" if error else "")
        )
    return {"text": CONCURRENCY_TEXT, "text_chars": len(CONCURRENCY_TEXT), "levels": levels}


def _compare(value: float | None, comparison: str, threshold: float) -> bool:
    if value is None or not math.isfinite(value):
        return False
    return value >= threshold if comparison == ">=" else value <= threshold


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Where each of the issue's targets landed."""

    def median_of(section: str, key: str) -> float | None:
        figure = results.get(section, {}).get(key)
        return None if figure is None else float(figure["median"])

    values: dict[str, float | None] = {
        "e2e_ttfa_ratio_batch_over_bidi": results["end_to_end"].get("ratio_batch_over_bidi"),
        "tts_only_ratio_whole_over_first": results["tts_only"].get("ratio_whole_over_first"),
        "bidi_overhead_over_floor_ms": median_of("end_to_end", "bidi_overhead_over_floor_ms"),
        # Zero stall means zero in EVERY trial, so the worst trial is the figure.
        "bidi_playback_stall_s": float(results["playback"]["bidi_stall_s"]["max"]),
        "opus_share_of_pcm16": results["payload"].get("opus_share_of_pcm16"),
        "heard_ratio_long_over_short": results.get("heard", {}).get("ratio_long_over_short_heard"),
        "heard_lead_silence_ms": median_of("heard", "lead_silence_ms"),
        "heard_sentence_gap_ms": median_of("heard", "sentence_gap_ms"),
        "bidi_heard_over_floor_ms": median_of("end_to_end", "bidi_heard_over_floor_ms"),
    }
    targets = []
    for name, (comparison, threshold, description) in TARGETS.items():
        value = values[name]
        target: dict[str, Any] = {
            "name": name,
            "description": description,
            "value": value,
            "target": f"{comparison} {threshold:g}",
            "met": _compare(value, comparison, threshold),
        }
        if name == "bidi_overhead_over_floor_ms" and value is not None and value < -threshold:
            # A floor above the measured TTFA by more than the target itself cannot be: the clocks or the
            # engine record do not fit the run, so the figure says nothing and gets no verdict.
            target["met"] = False
            target["note"] = "negative beyond the target: the floor does not fit the run (a timing error)"
        targets.append(target)
    return targets


async def run_benchmark(stack: BenchStack, config: BenchConfig, progress: Progress) -> dict[str, Any]:
    """Run every section on ``stack`` and return all figures (JSON-ready)."""
    started = time.perf_counter()
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "config": asdict(config),
        "machine": describe_machine(stack.engine),
    }
    progress("section 1/6: TTS only")
    results["tts_only"] = await bench_tts_only(stack, config, progress)
    progress("sections 2-4/6: end to end, playback, payload")
    end_to_end, playback, payload = await bench_end_to_end(stack, config, progress)
    results["end_to_end"] = end_to_end
    results["playback"] = playback
    results["payload"] = payload
    progress("section 5/6: concurrency")
    results["concurrency"] = await bench_concurrency(stack, config, progress)
    progress("section 6/6: first heard sound")
    results["heard"] = await bench_heard(stack.ws_url, config.trials, config.warmups, config.voice, progress)
    results["machine"]["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = evaluate_targets(results)
    return results
