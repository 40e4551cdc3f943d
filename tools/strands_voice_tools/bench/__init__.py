"""``strands-voice bench``: time to first audio and friends, measured side by side on this machine.

It starts the real TTS endpoint (ONNX engine) and the real example app on loopback, then measures, each
figure the median of trials after a warm-up, modes alternated trial by trial:

1. TTS only: a 267-character, four-sentence text as ONE message vs only its first sentence.
2. End to end over SSE, bidi vs batch, with the scripted model (first sentence at 0.6 s, all at 5.0 s),
   and bidi's overhead over the floor.
3. Playback stall of a real-time player starting at the first audio.
4. Leg 3 bytes per second of audio for pcm16 (base64), mp3 and opus.
5. p50/p95 TTFA with 1, 2, 4 and 8 concurrent endpoint sessions.
6. Time to first HEARD sound next to time to first byte: a 44- vs a 197-character sentence, the silence
   before the first sound and between two sentences.

``--schedule`` measures only the endpoint's scheduling, first-in-first-out against deadline side by side
(:mod:`strands_voice_tools.bench.schedule`): staggered sessions and the 16 x 4 load figure.

``--talk`` measures only ``VoiceCascade`` (:mod:`strands_voice_tools.bench.talk`): voice-to-voice latency,
split, and the barge-in reaction, with spoken questions at real-time speed; then its turn-taking in spoken
calls (:mod:`strands_voice_tools.bench.talk_calls`): its turn model beside its silence timer on paused
sentences, backchannels, noises and interruptions; then the eot-bench measure on the labelled end-of-turn
set (:mod:`strands_voice_tools.bench.eot_bench`): false cut-offs against delay for the verdict, Smart Turn
alone and the silence timer; then speculative answers on and off, through ``BidiAgent`` and ``/ws``
(:mod:`strands_voice_tools.bench.talk_speculation`: voice-to-voice and model calls, and the model request's
own cost with a client per request and with the app's kept one, :mod:`strands_voice_tools.bench.model_client`;
``--talk --speculation`` runs only those). ``--talk --peers`` makes the same calls to strands-voice
(``VoiceCascade`` under ``BidiAgent``, and the example app's ``WS /ws``) and to a Pipecat pipeline on the
same models, each in its own process, alternated call by call.

``--peers`` measures strands-voice beside kokoro-onnx (the ``peers`` group) on the same model file and voice
pack, each in its own process, alternated trial by trial (:mod:`strands_voice_tools.bench.peers`).

``--heard`` measures only section 6, in four configurations on one endpoint, alternated trial by trial
(Kokoro's raw segments, the silence policy, windowed decoding with a 20-frame first window, with the
engine's own plan): before/after for each step in one run.

A benchmark, not a test: ``--quick`` is the short smoke form CI runs.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.bench.options import add_arguments

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from strands_voice_tools.bench.config import BenchConfig

__all__ = ["add_arguments", "run"]

logger = logging.getLogger(__name__)


def _progress(line: str) -> None:
    print(f"[bench] {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark with parsed arguments: table on stdout, optional JSON and PNG; returns 0.

    Raises:
        StrandsVoiceError: the stack could not start or a run failed (the CLI prints it and exits 1).
    """
    # Imported here so that `strands-voice bench --help` and the pure submodules load instantly.
    from strands_voice_tools.bench.core import run_benchmark
    from strands_voice_tools.bench.plot import write_plot
    from strands_voice_tools.bench.report import format_table

    config = _config(args)
    plot_path: Path | None = getattr(args, "plot", None)
    if not getattr(args, "verbose", False):
        # The AgentCore app logs every invocation at INFO; the table is what matters here.
        logging.getLogger("bedrock_agentcore").setLevel(logging.WARNING)

    if getattr(args, "soak", None):
        from strands_voice_tools.bench.soak import format_soak, soak

        results = asyncio.run(soak(args.soak, _progress))
        return _report(args, results, format_soak(results), None, lambda _run, _path: None)
    if getattr(args, "schedule", False):
        return _run_schedule(args, plot_path)
    if getattr(args, "talk", False):
        return _run_talk(args, plot_path)
    if getattr(args, "peers", False):
        return _run_peers(args, plot_path)

    from strands_voice_tools.bench.stack import start_bench_stack

    heard_only = bool(getattr(args, "heard", False))
    _progress("loading the ONNX engine and starting the endpoint and the example app")
    stack = start_bench_stack(answer_text=config.answer_text)
    try:
        if heard_only:
            results = asyncio.run(_run_heard_steps(stack, config))
        else:
            results = asyncio.run(run_benchmark(stack, config, _progress))
    finally:
        stack.stop()

    if heard_only:
        from strands_voice_tools.bench.plot import write_heard_plot
        from strands_voice_tools.bench.report import format_heard_steps

        return _report(args, results, format_heard_steps(results), plot_path, write_heard_plot)
    return _report(args, results, format_table(results), plot_path, write_plot)


def _config(args: argparse.Namespace) -> BenchConfig:
    """The run's configuration: the quick form with ``--quick``, ``--trials`` checked and applied.

    Raises:
        StrandsVoiceError: ``--trials`` is below 1.
    """
    from strands_voice_tools.bench.config import BenchConfig

    config = BenchConfig.quick_form() if getattr(args, "quick", False) else BenchConfig()
    trials = getattr(args, "trials", None)
    if trials is not None and trials < 1:
        raise StrandsVoiceError("--trials must be at least 1")
    return _overridden(config, args, "trials")


def _overridden[C: "DataclassInstance"](config: C, args: argparse.Namespace, *options: str) -> C:
    """``config`` with each of ``options`` that was given on the command line (not None) put in."""
    given = {name: value for name in options if (value := getattr(args, name, None)) is not None}
    return dataclasses.replace(config, **given) if given else config


def _report(
    args: argparse.Namespace,
    results: dict[str, Any],
    table: str,
    plot_path: Path | None,
    write_plot: Callable[[dict[str, Any], Path], object],
) -> int:
    """Print a run's ``table``, write its JSON (``--json``) and its PNG (``--plot``); returns 0."""
    print(table, flush=True)
    _write_json(results, getattr(args, "json", None))
    if plot_path is not None:
        plot_path.parent.mkdir(parents=True, exist_ok=True)
        write_plot(results, plot_path)
        _progress(f"wrote {plot_path}")
    return 0


def _write_json(results: dict[str, Any], path: Path | None) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        _progress(f"wrote {path}")


def _run_talk(args: argparse.Namespace, plot_path: Path | None) -> int:
    """``--talk``: VoiceCascade's voice-to-voice latency and barge-in reaction, then its turn-taking calls
    (the ``listen`` group); with ``--peers``, the calls beside Pipecat instead."""
    from strands_voice_tools.bench.eot_bench import format_eot
    from strands_voice_tools.bench.talk import TalkBenchModel, bench_talk, format_talk, write_talk_plot
    from strands_voice_tools.bench.talk_calls import CallsConfig, bench_turns
    from strands_voice_tools.bench.talk_calls_report import format_turns
    from strands_voice_tools.talk.stack import talk_stack

    quick = bool(getattr(args, "quick", False))
    if getattr(args, "peers", False):
        return _run_talk_peers(args, plot_path, quick)
    if getattr(args, "calls", None):
        from strands_voice_tools.bench.talk_capacity import bench_capacity, format_capacity

        trials = getattr(args, "trials", None) or 1
        results = asyncio.run(bench_capacity(args.calls, _progress, trials=trials))
        return _report(args, results, format_capacity(results), None, lambda _run, _path: None)
    if getattr(args, "speculation", False):
        return _run_talk_speculation(args, quick)
    trials = getattr(args, "trials", None) or (2 if quick else 5)
    _progress("loading the ONNX engine, the endpoint, Silero VAD and faster-whisper")
    with talk_stack(TalkBenchModel()) as stack:
        results = asyncio.run(bench_talk(stack, trials, _progress))
    calls = CallsConfig(trials=1 if quick else trials, quick=quick)
    results["turn_taking"] = asyncio.run(bench_turns(calls, _progress))
    results["end_of_turn"] = _end_of_turn_figures(quick)
    lang = getattr(args, "lang", "a")
    if lang != "a":
        other = dataclasses.replace(calls, lang=lang)
        results[f"turn_taking_{lang}"] = asyncio.run(bench_turns(other, _progress))

    def write_plot(run: dict[str, Any], path: Path) -> None:
        from strands_voice_tools.bench.plot import _import_pyplot

        write_talk_plot(run, path, _import_pyplot())

    from strands_voice_tools.bench.talk_speculation import bench_speculation, format_speculation

    results["speculation"] = asyncio.run(bench_speculation(calls.trials, _progress))
    table = f"{format_talk(results)}\n\n{format_turns(results['turn_taking'])}"
    table += f"\n\n{format_eot(results['end_of_turn'])}"
    table += f"\n\n{format_speculation(results['speculation'])}"
    if lang != "a":
        names = {"j": "Japanese"}
        table += f"\n\n{names[lang]} callers (lang {lang}):\n{format_turns(results[f'turn_taking_{lang}'])}"
    return _report(args, results, table, plot_path, write_plot)


def _end_of_turn_figures(quick: bool) -> dict[str, Any]:
    """The eot-bench figures on the labelled set (the endpoint's voices: one with ``quick``)."""
    from strands_voice_tools.bench.eot_bench import bench_eot
    from strands_voice_tools.bench.turn_set import VOICES
    from strands_voice_tools.demo import load_tts_engine

    return bench_eot(load_tts_engine(), VOICES[:1] if quick else VOICES, _progress)


def _run_talk_speculation(args: argparse.Namespace, quick: bool) -> int:
    """``--talk --speculation``: voice-to-voice and model calls, speculation on and off, cascade and /ws."""
    from strands_voice_tools.bench.talk_speculation import bench_speculation, format_speculation

    trials = getattr(args, "trials", None) or (1 if quick else 3)
    from strands_voice_tools.machine import describe_machine

    results = {"kind": "talk-speculation", **asyncio.run(bench_speculation(trials, _progress))}
    results["machine"] = describe_machine()
    print(format_speculation(results), flush=True)
    _write_json(results, getattr(args, "json", None))
    return 0


def _run_talk_peers(args: argparse.Namespace, plot_path: Path | None, quick: bool) -> int:
    """``--talk --peers``: the same spoken calls to strands-voice and to a Pipecat pipeline."""
    import importlib.util

    from strands_voice_protocol.errors import MissingDependencyError

    from strands_voice_tools.bench.talk_calls import CallsConfig, bench_calls
    from strands_voice_tools.bench.talk_calls_report import format_talk_peers, write_talk_peers_plot

    for module, group in (("pipecat", "peers"), ("kokoro_onnx", "peers"), ("faster_whisper", "listen")):
        if importlib.util.find_spec(module) is None:
            raise MissingDependencyError(
                f"bench --talk --peers needs {module}: run `uv sync --group {group}`"
            )
    trials = getattr(args, "trials", None) or (1 if quick else 5)
    results = asyncio.run(bench_calls(CallsConfig(trials=trials, quick=quick), _progress))
    return _report(args, results, format_talk_peers(results), plot_path, write_talk_peers_plot)


def _run_schedule(args: argparse.Namespace, plot_path: Path | None) -> int:
    """``--schedule``: fifo against deadline scheduling on one engine (no example app needed)."""
    from strands_voice_tools.bench.schedule import ScheduleConfig, bench_schedule
    from strands_voice_tools.bench.schedule_report import format_schedule, write_schedule_plot
    from strands_voice_tools.demo import load_tts_engine

    config = ScheduleConfig.quick_form() if getattr(args, "quick", False) else ScheduleConfig()
    config = _overridden(config, args, "trials", "sessions")
    _progress("loading the ONNX engine")
    engine = load_tts_engine()
    results = asyncio.run(bench_schedule(engine, config, _progress))
    return _report(args, results, format_schedule(results), plot_path, write_schedule_plot)


def _run_peers(args: argparse.Namespace, plot_path: Path | None) -> int:
    """``--peers``: strands-voice's endpoint beside kokoro-onnx, each in its own process."""
    import importlib.util

    from strands_voice_protocol.errors import MissingDependencyError

    from strands_voice_tools.bench.peers import PEERS, TUNED, PeersConfig, bench_peers
    from strands_voice_tools.bench.peers_report import format_peers, write_peers_plot

    if importlib.util.find_spec("kokoro_onnx") is None:
        raise MissingDependencyError("bench --peers needs kokoro-onnx: run `uv sync --group peers`")
    config = PeersConfig(
        peers=(*PEERS, TUNED) if getattr(args, "peers_tuned", False) else PEERS,
        isa=getattr(args, "isa", None),
    )
    if getattr(args, "quick", False):
        config = dataclasses.replace(config, trials=1, texts=config.texts[:1])
    results = asyncio.run(bench_peers(_overridden(config, args, "trials"), _progress))
    return _report(args, results, format_peers(results), plot_path, write_peers_plot)


async def _run_heard_steps(stack: Any, config: Any) -> dict[str, Any]:
    """``--heard``: the heard section in each configuration, on the running stack."""
    import datetime
    import time

    from strands_voice_tools.bench.heard import bench_heard_steps
    from strands_voice_tools.machine import describe_machine, load_average

    started = time.perf_counter()
    results: dict[str, Any] = {
        "schema": "strands-voice-bench-heard/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "config": {"trials": config.trials, "warmups": config.warmups, "voice": config.voice},
        "machine": describe_machine(stack.engine),
    }
    results["heard_steps"] = await bench_heard_steps(
        stack.ws_url, stack.engine, config.trials, config.warmups, config.voice, _progress
    )
    results["machine"]["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    return results
