"""Sections 2-4 of the benchmark, from one set of runs through the example app over SSE.

2. End to end: bidi vs batch with the scripted model's fixed pacing, and bidi's overhead over the floor
   (first chunk's text complete + the engine's own time for it, as the engine ran in that trial; also
   against the engine timed alone).
3. Playback stall: a real-time player starting at the first audio, fed by each run's arrivals.
4. Payload: Leg 3 bytes per second of audio for pcm16 (base64), mp3 and opus, against raw PCM.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.leg3_client import ModeResult

from strands_voice_tools.bench.app_probe import run_voice_request
from strands_voice_tools.bench.config import BenchConfig, Progress
from strands_voice_tools.bench.engine_probe import EngineCall, engine_first_segment_ms
from strands_voice_tools.bench.stack import BenchStack
from strands_voice_tools.bench.stats import (
    median_or_none,
    ratio,
    simulate_playback,
    summarize,
    text_complete_index,
)
from strands_voice_tools.bench.texts import PROMPT

__all__ = ["bench_end_to_end"]


@dataclass
class _Runs:
    """Every answer the end-to-end sections read.

    Attributes:
        payload: One bidi run per encoded format (also the warm-up).
        bidi: The bidi trials (pcm16).
        batch: The batch trials (pcm16).
        bidi_engine: Each bidi trial's first engine call: its first chunk's synthesis as the engine ran it
            in that trial (None where the engine recorded none).
    """

    payload: dict[str, ModeResult] = field(default_factory=dict)
    bidi: list[ModeResult] = field(default_factory=list)
    batch: list[ModeResult] = field(default_factory=list)
    bidi_engine: list[EngineCall | None] = field(default_factory=list)


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
    chunks = [(chunk.arrival_s, chunk.audio_bytes / BYTES_PER_SECOND) for chunk in run.audio]
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
        seconds += chunk.audio_bytes / BYTES_PER_SECOND
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


async def _collect_runs(stack: BenchStack, config: BenchConfig, progress: Progress) -> _Runs:
    """The payload runs (also the warm-up), then bidi/batch trials alternated."""
    runs = _Runs()
    # Generous: on a busy machine one answer can take minutes; a quiet one needs about 15 s.
    timeout = httpx.Timeout(30.0, read=300.0)
    async with httpx.AsyncClient(timeout=timeout) as client:
        for audio_format in config.payload_formats:
            run = await run_voice_request(
                client, stack.app_url, PROMPT, mode="bidi", audio_format=audio_format
            )
            _check_run(run)
            runs.payload[audio_format] = run
            progress(
                f"payload/warm-up {audio_format}: {run.audio_wire_bytes} audio bytes in {run.total_s:.1f} s"
            )
        for trial in range(config.trials):
            order = ("bidi", "batch") if trial % 2 == 0 else ("batch", "bidi")
            for mode in order:
                calls_before = len(stack.timed.calls)
                run = await run_voice_request(client, stack.app_url, PROMPT, mode=mode)
                _check_run(run)
                (runs.bidi if mode == "bidi" else runs.batch).append(run)
                if mode == "bidi":
                    calls = stack.timed.calls[calls_before:]
                    runs.bidi_engine.append(calls[0] if calls else None)
            progress(
                f"end-to-end trial {trial + 1}/{config.trials}: "
                f"bidi {(runs.bidi[-1].first_audio_s or 0) * 1e3:.0f} ms, "
                f"batch {(runs.batch[-1].first_audio_s or 0) * 1e3:.0f} ms"
            )
    return runs


def _summary_or_none(values: Sequence[float]) -> dict[str, Any] | None:
    return summarize(values) if values else None


def _heard_ms(runs: Sequence[ModeResult]) -> list[float]:
    return [run.first_heard_s * 1e3 for run in runs if run.first_heard_s is not None]


def _floor_figures(runs: _Runs, engine_median: float | None) -> dict[str, Any]:
    """Bidi's time to first audio and first heard sound against the floor, trial by trial.

    The floor of each bidi trial: the moment its first chunk's text was complete plus the engine's own
    time for that chunk IN THAT TRIAL (recorded by RecordingEngine, under the trial's CPU load). The same sum
    with the idle engine time is reported too: it mixes in how much the shared CPU slowed the engine.
    """
    overhead: list[float] = []
    overhead_idle: list[float] = []
    overhead_idle_client: list[float] = []
    text_complete: list[float] = []
    trial_engine_ms: list[float] = []
    before_engine_ms: list[float] = []
    after_engine_ms: list[float] = []
    heard_over_floor: list[float] = []
    for run, call in zip(runs.bidi, runs.bidi_engine, strict=True):
        times = _first_chunk_times(run)
        if times is None:
            continue
        _chunk, t_ms, arrival_s = times
        if call is not None and run.first_heard_s is not None:
            # From the first chunk's text to the listener hearing it, over the engine's own time to its
            # first window of that chunk in the same trial.
            heard_over_floor.append((run.first_heard_s - arrival_s) * 1e3 - call.first_segment_s * 1e3)
        if run.server_ttfa_ms is None or run.first_audio_s is None:
            continue
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
    return {
        "bidi_heard_over_floor_ms": _summary_or_none(heard_over_floor),
        "first_chunk_text_complete_ms": _summary_or_none(text_complete),
        "engine_first_segment_in_trial_ms": _summary_or_none(trial_engine_ms),
        "bidi_overhead_over_floor_ms": _summary_or_none(overhead),
        "bidi_text_complete_to_engine_start_ms": _summary_or_none(before_engine_ms),
        "bidi_engine_done_to_client_audio_ms": _summary_or_none(after_engine_ms),
        "bidi_overhead_over_idle_floor_ms": _summary_or_none(overhead_idle),
        "bidi_overhead_over_idle_floor_client_ms": _summary_or_none(overhead_idle_client),
    }


def _end_to_end_section(runs: _Runs, config: BenchConfig, stack: BenchStack) -> dict[str, Any]:
    """Section 2: bidi vs batch TTFA and heard sound, and bidi's overhead over the floor."""
    # The engine alone, on an otherwise idle process, on the first chunk's text.
    first = _first_chunk_times(runs.bidi[0])
    first_chunk = first[0] if first is not None else None
    engine_ms: list[float] = []
    if first_chunk is not None:
        voice = config.voice or str(stack.engine.default_voice)
        engine_ms = engine_first_segment_ms(
            stack.engine, first_chunk, voice=voice, trials=config.trials, warmups=config.warmups
        )
    floor = _floor_figures(runs, median_or_none(engine_ms))
    bidi, batch = runs.bidi, runs.batch
    bidi_ttfa = [(run.first_audio_s or 0.0) * 1e3 for run in bidi]
    batch_ttfa = [(run.first_audio_s or 0.0) * 1e3 for run in batch]
    return {
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
        "ratio_batch_over_bidi": ratio(median_or_none(batch_ttfa), median_or_none(bidi_ttfa)),
        "bidi_heard_ms": _summary_or_none(_heard_ms(bidi)),
        "batch_heard_ms": _summary_or_none(_heard_ms(batch)),
        "bidi_heard_over_floor_ms": floor.pop("bidi_heard_over_floor_ms"),
        "first_chunk_text": first_chunk,
        "first_chunk_text_complete_ms": floor.pop("first_chunk_text_complete_ms"),
        "engine_first_segment_ms": _summary_or_none(engine_ms),
        **floor,
        "timelines": {"bidi": _timeline(_representative(bidi)), "batch": _timeline(_representative(batch))},
    }


def _playback_section(runs: _Runs) -> dict[str, Any]:
    """Section 3: the stall of a real-time player starting at each run's first audio."""
    bidi_stalls = [_pcm_playback(run)[0] for run in runs.bidi]
    batch_stalls = [_pcm_playback(run)[0] for run in runs.batch]
    return {
        "bidi_stall_s": summarize(bidi_stalls),
        "batch_stall_s": summarize(batch_stalls),
        "bidi_stall_count": summarize(_pcm_playback(run)[1] for run in runs.bidi),
        "batch_stall_count": summarize(_pcm_playback(run)[1] for run in runs.batch),
        "bidi_trials_with_stall": sum(1 for stall in bidi_stalls if stall > 0),
    }


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
        "ratio_to_raw_pcm": run.audio_wire_bytes / duration / BYTES_PER_SECOND,
    }


def _payload_section(runs: _Runs) -> dict[str, Any]:
    """Section 4: Leg 3 bytes per second of audio per format; pcm16 is the bidi trial nearest the median."""
    pcm_figures = [_payload_figures(run) for run in runs.bidi]
    middle = statistics.median(figures["bytes_per_audio_s"] for figures in pcm_figures)
    pcm = min(pcm_figures, key=lambda figures: abs(figures["bytes_per_audio_s"] - middle))
    formats: dict[str, Any] = {"pcm16": pcm}
    for audio_format, run in runs.payload.items():
        formats[audio_format] = _payload_figures(run)

    def share_of_pcm16(audio_format: str) -> float | None:
        if audio_format not in formats:
            return None
        return float(formats[audio_format]["bytes_per_audio_s"] / pcm["bytes_per_audio_s"])

    return {
        "raw_pcm_bytes_per_s": BYTES_PER_SECOND,
        "formats": formats,
        "opus_share_of_pcm16": share_of_pcm16("opus"),
        "mp3_share_of_pcm16": share_of_pcm16("mp3"),
    }


async def bench_end_to_end(
    stack: BenchStack, config: BenchConfig, progress: Progress
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """End to end through the app: payload runs (also the warm-up), then bidi/batch trials alternated.

    Returns:
        The ``end_to_end``, ``playback`` and ``payload`` sections.
    """
    runs = await _collect_runs(stack, config, progress)
    return _end_to_end_section(runs, config, stack), _playback_section(runs), _payload_section(runs)
