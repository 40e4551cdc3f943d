"""``bench --talk``'s speculation figures: voice-to-voice and model calls with speculative answers and
without, through ``BidiAgent`` (``VoiceCascade``) and the app's ``WS /ws``, side by side in one run.

Each system runs in its own process (:mod:`.peer_strands`, ``--speculate on|off``), one after another
(only one loaded at a time: four of them would not fit a small machine's memory beside each other), and
takes the same short calls (:func:`.call_script.plan_call`, quick: questions, a backchannel, an
interruption, a paused sentence; the endpoint's voices) as ``bench --talk``'s turn-taking. They share one
LLM: the OpenAI-compatible stand-in (its first sentence 0.5 s after it is asked), whose request log counts
the model calls each call made. A turn is a question, an interruption or a paused sentence (what is
answered); with speculation an answer held at a pause is dropped when the caller goes on, and its call
counts too. Then the model request's own cost, with a client per request and with the app's kept client
(:mod:`.model_client`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from strands_voice_tools.bench.call_figures import ms_summary
from strands_voice_tools.bench.call_link import CallLink
from strands_voice_tools.bench.call_log import UtteranceFigures, turn_figures
from strands_voice_tools.bench.call_script import FIRST_SENTENCE_S, LONG_ANSWER, plan_call, run_call
from strands_voice_tools.bench.model_client import bench_model_client, format_model_client
from strands_voice_tools.bench.peer_processes import CallPeer
from strands_voice_tools.bench.turn_set import VOICES, Kind, Said, spoken_set
from strands_voice_tools.machine import load_average

__all__ = ["SPECULATION_SYSTEMS", "bench_speculation", "format_speculation"]

Progress = Callable[[str], None]

_WORKER: Final = "strands_voice_tools.bench.peer_strands"
#: name -> (front end, speculation)
SPECULATION_SYSTEMS: Final[dict[str, tuple[str, str]]] = {
    "BidiAgent, speculation": ("cascade", "on"),
    "BidiAgent, no speculation": ("cascade", "off"),
    "/ws, speculation": ("ws", "on"),
    "/ws, no speculation": ("ws", "off"),
}
_TURNS: Final = ("question", "interruption", "paused")
#: The model requests timed through each client (:mod:`.model_client`).
MODEL_CLIENT_REQUESTS: Final = 30


def _system_figures(figures: list[UtteranceFigures], model_calls: int) -> dict[str, Any]:
    questions = [figure for figure in figures if figure.kind == "question"]
    turns = sum(1 for figure in figures if figure.kind in _TURNS)
    after = [
        figure.voice_to_voice_s - figure.end_of_turn_s
        for figure in questions
        if figure.voice_to_voice_s is not None and figure.end_of_turn_s is not None
    ]
    return {
        "voice_to_voice_ms": ms_summary([figure.voice_to_voice_s for figure in questions]),
        "end_of_turn_ms": ms_summary([figure.end_of_turn_s for figure in questions]),
        # What speculation changes: from the turn's end (its final transcript) to the answer's first sound.
        "after_turn_end_ms": ms_summary(list(after)),
        "model_calls": model_calls,
        "turns": turns,
        "model_calls_per_turn": round(model_calls / turns, 2) if turns else None,
        "cut_mid_sentence": sum(1 for figure in figures if figure.kind == "paused" and figure.cut),
    }


async def _calls(
    name: str,
    llm_url: str,
    log: Any,
    model: Any,
    spoken: dict[str, dict[Kind, list[Said]]],
    trials: int,
    progress: Progress,
) -> dict[str, Any]:
    """One system: started, called ``1 + trials`` times (the first uncounted), stopped."""
    front, speculate = SPECULATION_SYSTEMS[name]
    command = (_WORKER, "--system", front, "--speculate", speculate, "--llm-url", llm_url)
    peer = CallPeer(name=name, command=command)
    progress(f"starting {name}")
    await peer.spawn()
    figures: list[UtteranceFigures] = []
    model_calls = 0
    try:
        await peer.until_ready()
        for trial in range(1 + trials):
            voice = VOICES[trial % len(VOICES)]
            before = len(log.requests)
            link = await CallLink.open(peer.url)
            try:
                await run_call(link, model, plan_call(spoken[voice], trial, quick=True), progress)
            finally:
                call = await link.close()
            await asyncio.sleep(1.0)  # the system hears the hang-up (a late model call counts to this call)
            if trial:  # the first call warms up
                figures += turn_figures(call)
                model_calls += len(log.requests) - before
            progress(f"{name}, call {trial}: {len(log.requests) - before} model calls")
    finally:
        await peer.stop()
    return {"name": name, **_system_figures(figures, model_calls)}


async def bench_speculation(trials: int, progress: Progress, engine: Any = None) -> dict[str, Any]:
    """The four systems' calls (see the module docstring); a JSON-ready mapping."""
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.demo import load_tts_engine
    from strands_voice_tools.openai_stand_in import StandInLog, openai_stand_in_app

    engine = engine or load_tts_engine()
    voices = VOICES[: min(len(VOICES), 1 + trials)]
    spoken = {voice: spoken_set(engine, voice, seed=index) for index, voice in enumerate(voices)}
    spoken = {voice: spoken[voices[index % len(voices)]] for index, voice in enumerate(VOICES)}
    model = ScriptedModel(text=LONG_ANSWER, first_sentence_s=FIRST_SENTENCE_S, total_s=3.0)
    log = StandInLog()
    systems = []
    with running_server(openai_stand_in_app(model, log)) as llm:
        for name in SPECULATION_SYSTEMS:
            systems.append(await _calls(name, f"{llm.base_url}/v1", log, model, spoken, trials, progress))
    return {
        "trials": trials,
        "model_first_sentence_s": FIRST_SENTENCE_S,
        "systems": systems,
        "model_client": await bench_model_client(MODEL_CLIENT_REQUESTS),
        "load_average_end": load_average(),
    }


def format_speculation(results: dict[str, Any]) -> str:
    """The figures as a table."""
    lines = [
        f"Speculative answers, {results['trials']} calls each (voice-to-voice on questions: median, p95)",
        "",
        f"{'system':<28}{'voice-to-voice':>16}{'end of turn':>13}{'then sound':>12}{'model calls':>13}"
        f"{'per turn':>10}",
    ]
    for system in results["systems"]:
        v2v, eot, after = (
            system[key] for key in ("voice_to_voice_ms", "end_of_turn_ms", "after_turn_end_ms")
        )
        v2v_text = "-" if v2v is None else f"{v2v['median']:.0f} / {v2v['p95']:.0f}"
        eot_text = "-" if eot is None else f"{eot['median']:.0f}"
        after_text = "-" if after is None else f"{after['median']:.0f}"
        per_turn = "-" if system["model_calls_per_turn"] is None else f"{system['model_calls_per_turn']:.2f}"
        lines.append(
            f"{system['name']:<28}{v2v_text:>16}{eot_text:>13}{after_text:>12}"
            f"{system['model_calls']:>6} / {system['turns']:<4}{per_turn:>10}"
        )
    if "model_client" in results:
        lines += ["", format_model_client(results["model_client"])]
    return "\n".join(lines)
