"""How many spoken calls one machine holds: ``strands-voice bench --talk --calls 1,2,4``.

One worker process serves the example app's ``WS /ws`` with the Kokoro endpoint in the same process
(:data:`~.talk_calls.SYSTEMS` ``strands-voice-ws``: the app's default listener, so its default call cap
and admission). For each N, N calls at once (started :data:`STAGGER_S` apart), each the short plan of
``bench --talk``'s turn-taking calls (:func:`.call_script.plan_call`): questions, a backchannel and an
interruption said over the answer, a paused sentence. The stand-in LLM answers by what it heard
(:class:`HeardModel`), since N calls share it. Per N: voice-to-voice, end of turn and barge-in p50/p95 over
every call's utterances, and the largest N whose voice-to-voice p95 is at most :data:`TARGET_S`: the
calls this machine holds, and per core what the app's default cap is made of
(``agentcore_app.call.CALLS_PER_CORE``).
"""

from __future__ import annotations

import asyncio
import datetime
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

from strands_voice_tools.bench.call_figures import summarize_turns
from strands_voice_tools.bench.call_log import turn_figures
from strands_voice_tools.bench.call_script import (
    ACK,
    FIRST_SENTENCE_S,
    LONG_ANSWER,
    PAUSED_REPLY,
    REPLY,
    plan_call,
)
from strands_voice_tools.bench.turn_set import VOICES, spoken_set
from strands_voice_tools.machine import describe_machine, load_average

__all__ = ["STAGGER_S", "TARGET_S", "answer_for", "bench_capacity", "calls_held", "format_capacity"]

Progress = Callable[[str], None]

#: The voice-to-voice p95 a number of calls must hold to count as held.
TARGET_S: Final = 1.5
#: Seconds between two calls' start (calls at once, not in lockstep).
STAGGER_S: Final = 0.4
_SYSTEM: Final = "strands-voice-ws"


def answer_for(heard: str) -> str:
    """What the stand-in answers to a caller's turn, by its words: the long answer to a question, a short
    reply to the interruption and to a paused sentence, "Okay." to anything else (a backchannel taken as a
    turn)."""
    words = heard.lower()
    if "stop" in words:
        return REPLY
    if "would like to know" in words or "order number" in words:
        return PAUSED_REPLY
    if any(key in words for key in ("cost", "cancel", "devices", "offline")):
        return LONG_ANSWER
    return ACK


def _heard_model() -> Any:
    from agentcore_app.scripted import ScriptedModel, ScriptedModelConfig

    class HeardModel(ScriptedModel):
        """The scripted stand-in answering each turn by what was heard (:func:`answer_for`); the calls'
        own ``update_config`` (one caller's script) is ignored: N callers share this model."""

        def update_config(self, **model_config: Any) -> None:
            """Ignored (see the class docstring)."""

        def script_for(self, messages: Any) -> ScriptedModelConfig:
            heard = " ".join(
                str(block["text"])
                for block in (messages[-1]["content"] if messages else [])
                if isinstance(block, dict) and "text" in block
            )
            text = answer_for(heard)
            total_s = 3.0 if text == LONG_ANSWER else FIRST_SENTENCE_S
            return {**self.config, "text": text, "total_s": total_s}

    return HeardModel(text=LONG_ANSWER, first_sentence_s=FIRST_SENTENCE_S, total_s=3.0)


def calls_held(rows: Sequence[dict[str, Any]], target_s: float = TARGET_S) -> int:
    """The largest N whose voice-to-voice p95 is at most ``target_s`` with every smaller N holding it too
    (0: not even one)."""
    held = 0
    for row in sorted(rows, key=lambda item: int(item["calls"])):
        v2v = row["voice_to_voice_ms"]
        if v2v is None or v2v["p95"] > 1000.0 * target_s:
            break
        held = int(row["calls"])
    return held


async def _round(url: str, count: int, spoken: Any, model: Any, progress: Progress) -> list[Any]:
    from strands_voice_tools.bench.call_link import CallLink
    from strands_voice_tools.bench.call_script import run_call

    async def one(index: int) -> Any:
        await asyncio.sleep(index * STAGGER_S)
        link = await CallLink.open(url)
        try:
            await run_call(link, model, plan_call(spoken[index % len(spoken)], index, quick=True), progress)
        finally:
            log = await link.close()
        return log

    async with asyncio.timeout(600):
        logs = list(await asyncio.gather(*(one(index) for index in range(count))))
    await asyncio.sleep(1.0)  # the app hears every hang-up before the next round
    return logs


def _row(count: int, logs: Sequence[Any], load: Any) -> dict[str, Any]:
    summary = summarize_turns([figure for log in logs for figure in turn_figures(log)])
    return {
        "calls": count,
        "voice_to_voice_ms": summary["voice_to_voice_ms"],
        "end_of_turn_ms": summary["end_of_turn_ms"],
        "barge_in_ms": summary["barge_in_ms"],
        "interruptions_stopped": summary["interruptions_stopped"],
        "load_average": load,
    }


async def bench_capacity(
    counts: Sequence[int], progress: Progress, argv: Sequence[str] | None = None, trials: int = 1
) -> dict[str, Any]:
    """N calls at once for each N of ``counts``, ``trials`` rounds each (see the module docstring).

    Returns:
        A JSON-ready mapping: ``rows`` (one per N), ``calls_held``, ``cores``, ``calls_per_core``,
        ``machine``, ``command``.
    """
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.bench.talk_calls import _start
    from strands_voice_tools.demo import load_tts_engine
    from strands_voice_tools.openai_stand_in import openai_stand_in_app

    started = time.perf_counter()
    engine = load_tts_engine()
    spoken = [spoken_set(engine, voice, seed=index) for index, voice in enumerate(VOICES)]
    model = _heard_model()
    rows: list[dict[str, Any]] = []
    with running_server(openai_stand_in_app(model)) as llm:
        # The app's own cap would refuse the calls being measured: it is what this measures.
        os.environ["CALL_MAX_CALLS"] = str(max(counts))
        try:
            running = await _start((_SYSTEM,), f"{llm.base_url}/v1", progress)
        finally:
            os.environ.pop("CALL_MAX_CALLS", None)
        try:
            url = running[_SYSTEM].peer.url
            await _round(url, 1, spoken, model, progress)  # warm-up, not counted
            for count in counts:
                logs, loads = [], []
                for trial in range(trials):
                    progress(f"{count} call(s) at once, trial {trial + 1}/{trials}")
                    loads.append(load_average())
                    logs += await _round(url, count, spoken, model, progress)
                rows.append(_row(count, logs, loads))
        finally:
            await running[_SYSTEM].memory.stop()
            await running[_SYSTEM].peer.stop()
    held = calls_held(rows)
    cores = os.cpu_count() or 1
    return {
        "schema": "strands-voice-bench-capacity/1",
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": shlex.join(["strands-voice", *(sys.argv[1:] if argv is None else argv)]),
        "target_s": TARGET_S,
        "trials": trials,
        "rows": rows,
        "calls_held": held,
        "cores": cores,
        "calls_per_core": round(held / cores, 2),
        "machine": {**describe_machine(), "load_average_end": load_average()},
        "duration_s": round(time.perf_counter() - started, 1),
    }


def _ms(summary: dict[str, Any] | None) -> str:
    return "-" if summary is None else f"{round(summary['median']):,} / {round(summary['p95']):,}"


def format_capacity(results: dict[str, Any]) -> str:
    """The table (p50 / p95 in ms per N) and the capacity line."""
    lines = [
        "calls | voice-to-voice p50 / p95 | end of turn p50 / p95 | barge-in p50 / p95 | load average",
        "---:|---:|---:|---:|---",
    ]
    for row in results["rows"]:
        load = row["load_average"]
        lines.append(
            f"{row['calls']} | {_ms(row['voice_to_voice_ms'])} | {_ms(row['end_of_turn_ms'])} | "
            f"{_ms(row['barge_in_ms'])} | {load}"
        )
    lines.append(
        f"\ncalls held (voice-to-voice p95 <= {results['target_s']} s): {results['calls_held']} on "
        f"{results['cores']} core(s) = {results['calls_per_core']} per core"
    )
    return "\n".join(lines)
