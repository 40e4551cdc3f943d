"""The benchmark itself: six sections measured on one running stack, each figure a median of trials.

1. TTS only: one 267-character message vs its first sentence, straight to the endpoint.
2-4. End to end, playback stall and payload, from one set of runs through the example app
   (:mod:`strands_voice_tools.bench.end_to_end`).
5. Concurrency: p50/p95 TTFA with 1, 2, 4 and 8 sessions at once on the endpoint.
6. Heard: time to first heard sound (first 10 ms window above -40 dBFS, on a player starting with the
   first byte) for a 44-character vs a 197-character unpunctuated sentence, the silence before the first
   sound and between two sentences (:mod:`strands_voice_tools.bench.heard`).

Where the figures land against the issue's targets is :mod:`strands_voice_tools.bench.targets`.
"""

from __future__ import annotations

import datetime
import time
from dataclasses import asdict
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.bench.config import BenchConfig, Progress
from strands_voice_tools.bench.end_to_end import bench_end_to_end
from strands_voice_tools.bench.endpoint_probe import measure_concurrent, measure_request
from strands_voice_tools.bench.heard import bench_heard
from strands_voice_tools.bench.stack import BenchStack
from strands_voice_tools.bench.stats import median_or_none, percentile, ratio, summarize
from strands_voice_tools.bench.targets import evaluate_targets
from strands_voice_tools.bench.texts import BENCH_TEXT, CONCURRENCY_TEXT, FIRST_SENTENCE
from strands_voice_tools.machine import describe_machine, load_average

__all__ = ["SCHEMA", "bench_concurrency", "bench_tts_only", "run_benchmark"]

SCHEMA: Final = "strands-voice-bench/2"


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
    whole_median = median_or_none(whole)
    first_median = median_or_none(first)
    return {
        "text_chars": len(BENCH_TEXT),
        "sentences": 4,
        "first_sentence_chars": len(FIRST_SENTENCE),
        "whole_ttfa_ms": summarize(whole),
        "first_sentence_ttfa_ms": summarize(first),
        "ratio_whole_over_first": ratio(whole_median, first_median),
        "whole_heard_ms": summarize(whole_heard) if whole_heard else None,
        "first_sentence_heard_ms": summarize(first_heard) if first_heard else None,
        # Endpoint time / audio time for the first sentence: below 1 means faster than real time.
        "first_sentence_real_time_factor": median_or_none(rtf),
        "blog_reference_ms": {"whole": 329.3, "first_sentence": 156.7, "ratio": 2.1},
    }


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
