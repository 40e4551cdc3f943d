"""Spoken calls to voice systems, side by side in one run: ``bench --talk``'s turn-taking figures and
``bench --talk --peers``.

Each system runs in its own process (:class:`~.peer_processes.CallPeer`): strands-voice's ``VoiceCascade``
under ``BidiAgent`` and the example app's ``WS /ws`` (:mod:`.peer_strands`), and a Pipecat pipeline
(:mod:`.peer_pipecat`). They share one LLM: the OpenAI-compatible stand-in served here over a
:class:`~agentcore_app.scripted.ScriptedModel` (its first sentence 0.5 s after it is asked), scripted per
utterance by :mod:`.call_script`. The caller's utterances (:mod:`.turn_set`) are spoken here by the
endpoint's engine, a voice per trial in turn. The systems start one after another (start-up: process start
to its ready line) and stay up; then trial by trial each takes one call, one at a time, in an order
reversed every other trial; the first ``warmups`` trials (the short plan) are not counted. Memory is the
resident memory of each system's process tree, sampled every 0.2 s from its start to its stop (the peak).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from strands_voice_tools.bench.call_figures import summarize_turns
from strands_voice_tools.bench.call_link import CallLink
from strands_voice_tools.bench.call_log import CallLog, UtteranceFigures, timeline, turn_figures
from strands_voice_tools.bench.call_script import FIRST_SENTENCE_S, LONG_ANSWER, plan_call, run_call
from strands_voice_tools.bench.peer_processes import CallPeer, MemoryWatch, free_port
from strands_voice_tools.bench.peers import trial_order
from strands_voice_tools.bench.turn_set import TURN_TEXTS, Kind, Said, spoken_set
from strands_voice_tools.machine import describe_machine, load_average, package_version

__all__ = [
    "PEER_SYSTEMS",
    "SYSTEMS",
    "TURN_SYSTEMS",
    "CallsConfig",
    "System",
    "bench_calls",
    "bench_turns",
]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class System:
    """A system the calls go to.

    Attributes:
        module: Its worker (``python -m``).
        args: The worker's arguments (besides ``--llm-url``).
        setup: What it runs, in words (for the report).
        env: Extra environment for the worker.
        given_port: The worker serves on a port it is given (``--port``), not on one it picks.
    """

    module: str
    args: tuple[str, ...]
    setup: str
    env: tuple[tuple[str, str], ...] = ()
    given_port: bool = False

    def command(self, llm_url: str) -> tuple[str, ...]:
        """The worker's ``python -m`` arguments."""
        port = ("--port", str(free_port())) if self.given_port else ()
        return (self.module, *self.args, *port, "--llm-url", llm_url)


_STRANDS: Final = "strands_voice_tools.bench.peer_strands"
SYSTEMS: Final[dict[str, System]] = {
    "strands-voice": System(
        _STRANDS,
        ("--system", "cascade"),
        "VoiceCascade under BidiAgent: the library's listener (Silero VAD, its end of turn, faster-whisper "
        "base int8), Strands' OpenAIModel, the Kokoro endpoint (int8 ONNX) in the same process",
    ),
    "strands-voice-ws": System(
        _STRANDS,
        ("--system", "ws"),
        "the example app's WS /ws call (create_app with its default listener), Strands' OpenAIModel, the "
        "Kokoro endpoint in the same process",
    ),
    "pipecat": System(
        "strands_voice_tools.bench.peer_pipecat",
        (),
        "Pipecat 1.14: SileroVADAnalyzer(), the default turn strategies (Smart Turn v3.2 ends a turn), "
        "WhisperSTTService (the same base model, CPU int8), OpenAILLMService, KokoroTTSService (kokoro-onnx, "
        "the same int8 model and voice), a WebSocket server transport; TTS stop_frame_timeout_s 20",
        env=(("LOGURU_LEVEL", "WARNING"),),
        given_port=True,
    ),
    "strands-voice, silence timer": System(
        _STRANDS,
        ("--system", "cascade", "--end-of-turn", "silence"),
        "as strands-voice, the listener's end of turn forced to its silence timer",
    ),
}
#: ``bench --talk --peers``: strands-voice (cascade and /ws) beside Pipecat.
PEER_SYSTEMS: Final = ("strands-voice", "strands-voice-ws", "pipecat")
#: ``bench --talk``: the cascade's end of turn, its turn model beside its silence timer.
TURN_SYSTEMS: Final = ("strands-voice", "strands-voice, silence timer")


@dataclass(frozen=True)
class CallsConfig:
    """What to run.

    Attributes:
        systems: The systems (names of :data:`SYSTEMS`), in the first trial's order.
        trials: Counted trials (one call per system each).
        warmups: Uncounted trials first (the short plan).
        quick: Every trial on the short plan.
        lang: The callers' language (Kokoro's letter: ``a`` English, ``j`` Japanese; the turn set's
            utterances, the call's ``lang``, the stand-in's answers).
    """

    systems: tuple[str, ...] = PEER_SYSTEMS
    trials: int = 5
    warmups: int = 1
    quick: bool = False
    lang: str = "a"


@dataclass
class _Running:
    peer: CallPeer
    memory: MemoryWatch
    ready_mb: float | None = None


async def _start(names: Sequence[str], llm_url: str, progress: Progress) -> dict[str, _Running]:
    """Start each system in turn (the next once the last is ready)."""
    running: dict[str, _Running] = {}
    for name in names:
        system = SYSTEMS[name]
        peer = CallPeer(name=name, command=system.command(llm_url), env=dict(system.env))
        progress(f"starting {name}")
        await peer.spawn()
        memory = MemoryWatch(peer.pid)
        memory.start()
        running[name] = _Running(peer, memory)
        await peer.until_ready()
        running[name].ready_mb = memory.sample()
        progress(f"{name} ready in {peer.load_s} s, {running[name].ready_mb} MB")
    return running


async def _one_call(
    running: _Running,
    model: Any,
    spoken: dict[Kind, list[Said]],
    trial: int,
    config: CallsConfig,
    progress: Progress,
) -> CallLog:
    lang = None if config.lang == "a" else config.lang
    link = await CallLink.open(running.peer.url, lang=lang)
    short = trial < config.warmups or config.quick
    try:
        await run_call(link, model, plan_call(spoken, trial, quick=short), progress, config.lang)
    finally:
        log = await link.close()
    await asyncio.sleep(1.0)  # the system hears the hang-up before the next call anywhere
    return log


def _line(figures: Sequence[UtteranceFigures]) -> str:
    summary = summarize_turns(figures)
    v2v = summary["voice_to_voice_ms"]
    barge = summary["barge_in_ms"]
    return (
        f"voice-to-voice {'-' if v2v is None else round(v2v['median'])} ms, "
        f"barge-in {'-' if barge is None else round(barge['median'])} ms, "
        f"cut {summary['cut_mid_sentence']['n']}/{summary['cut_mid_sentence']['of']}, "
        f"backchannel stops {summary['backchannel_stops']['n']}/{summary['backchannel_stops']['of']}"
    )


async def _trials(
    running: dict[str, _Running], config: CallsConfig, engine: Any, model: Any, progress: Progress
) -> dict[str, list[CallLog]]:
    counted: dict[str, list[CallLog]] = {name: [] for name in running}
    spoken: dict[str, dict[Kind, list[Said]]] = {}
    voices = TURN_TEXTS[config.lang].voices
    for trial in range(config.warmups + config.trials):
        voice = voices[trial % len(voices)]
        if voice not in spoken:
            spoken[voice] = spoken_set(engine, voice, seed=len(spoken), lang=config.lang)
        warm = trial < config.warmups
        for name in trial_order(trial, tuple(running)):
            what = "warm-up" if warm else f"trial {trial - config.warmups + 1}/{config.trials}"
            log = await _one_call(running[name], model, spoken[voice], trial, config, progress)
            progress(f"{name}, {what} ({voice}): {_line(turn_figures(log))}")
            if not warm:
                counted[name].append(log)
    return counted


def _header(config: CallsConfig, argv: Sequence[str] | None) -> dict[str, Any]:
    return {
        "schema": "strands-voice-bench-calls/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": shlex.join(["strands-voice", *(sys.argv[1:] if argv is None else argv)]),
        "config": {
            **dataclasses.asdict(config),
            "voices": list(TURN_TEXTS[config.lang].voices),
            "model_first_sentence_s": FIRST_SENTENCE_S,
        },
        "machine": {**describe_machine(), "pipecat": package_version("pipecat-ai")},
    }


async def bench_calls(
    config: CallsConfig, progress: Progress, argv: Sequence[str] | None = None, engine: Any = None
) -> dict[str, Any]:
    """Start the systems, call each trial by trial (see the module docstring), stop them.

    Args:
        config: What to run.
        progress: Called with a line per step.
        argv: The command's arguments after ``strands-voice`` (recorded as ``command``).
        engine: The Kokoro engine that speaks the caller's utterances (loaded when None).

    Returns:
        A JSON-ready mapping: ``peers`` (one entry per system: :func:`.call_figures.summarize_turns`'s
        fields, ``load_s``, ``ready_mb``, ``peak_mb``, ``setup``, every utterance's figures and each call's
        :func:`.call_log.timeline`),
        ``machine``, ``config``, ``command``.

    Raises:
        StrandsVoiceError: a system did not start, or a call could not be opened.
    """
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.demo import load_tts_engine
    from strands_voice_tools.openai_stand_in import openai_stand_in_app

    started = time.perf_counter()
    results = _header(config, argv)
    engine = engine or load_tts_engine()
    model = ScriptedModel(text=LONG_ANSWER, first_sentence_s=FIRST_SENTENCE_S, total_s=3.0)
    with running_server(openai_stand_in_app(model)) as llm:
        running: dict[str, _Running] = {}
        try:
            running = await _start(config.systems, f"{llm.base_url}/v1", progress)
            counted = await _trials(running, config, engine, model, progress)
        finally:
            peaks = {name: await item.memory.stop() for name, item in running.items()}
            for item in running.values():
                await item.peer.stop()
    figures = {
        name: [figure for log in logs for figure in turn_figures(log)] for name, logs in counted.items()
    }
    results["peers"] = [
        {
            "name": name,
            **summarize_turns(figures[name]),
            "load_s": item.peer.load_s,
            "ready_mb": item.ready_mb,
            "peak_mb": peaks[name],
            "setup": SYSTEMS[name].setup,
            "utterances": [dataclasses.asdict(figure) for figure in figures[name]],
            "calls": [timeline(log) for log in counted[name]],
        }
        for name, item in running.items()
    ]
    results["machine"]["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    return results


async def bench_turns(
    config: CallsConfig, progress: Progress, argv: Sequence[str] | None = None
) -> dict[str, Any]:
    """``bench --talk``'s turn-taking: :func:`bench_calls` on the cascade's turn model and silence timer
    (:data:`TURN_SYSTEMS`), then the silence timer swept over the paused sentences said in those calls
    (:func:`.call_figures.silence_sweep`); ``turn_model`` says whether the turn-end model is installed
    (without it both run the silence timer)."""
    from strands_voice.listen import ListenSettings, default_turn_model
    from strands_voice_tools.bench.call_figures import longest_pause_s, silence_sweep
    from strands_voice_tools.bench.turn_set import spoken
    from strands_voice_tools.demo import load_tts_engine

    engine = load_tts_engine()
    results = await bench_calls(dataclasses.replace(config, systems=TURN_SYSTEMS), progress, argv, engine)
    texts = TURN_TEXTS[config.lang]
    voices = texts.voices[: min(len(texts.voices), config.warmups + config.trials)]
    pauses = [longest_pause_s(spoken(engine, text, voice)) for voice in voices for text in texts.paused]
    timer = next(peer for peer in results["peers"] if peer["name"] == TURN_SYSTEMS[1])
    delay = timer["end_of_turn_question_ms"]
    settings = ListenSettings()
    results["turn_model"] = default_turn_model() is not None
    results["silence_sweep"] = silence_sweep(
        pauses, None if delay is None else delay["median"] / 1000.0, settings.end_silence_s
    )
    return results
