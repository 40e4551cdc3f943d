"""``bench --talk``'s calls without the real systems: the spoken set's pieces, the plan, one call played
over a real WebSocket to a toy system (its outcomes, not its timings), the tables and the plot, the
process-tree memory, and Pipecat's raw PCM serializer (the ``peers`` group)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from optional_groups import require
from strands_voice_tools.bench.call_link import CallLink
from strands_voice_tools.bench.call_log import turn_figures
from strands_voice_tools.bench.call_script import ACK, LONG_ANSWER, PAUSED_REPLY, REPLY, plan_call, run_call
from strands_voice_tools.bench.peer_processes import MemoryWatch, tree_rss_mb
from strands_voice_tools.bench.peer_strands import listen_settings
from strands_voice_tools.bench.talk_calls_report import format_talk_peers, format_turns, write_talk_peers_plot
from strands_voice_tools.bench.turn_set import NOISE_DBFS, Kind, Said, noise_burst
from strands_voice_tools.machine import cpu_instruction_set
from websockets.asyncio.server import ServerConnection, serve

CALLER_RATE, ANSWER_RATE = 16000, 24000


def tone(seconds: float, rate: int = CALLER_RATE) -> bytes:
    t = np.arange(round(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 220 * t) * 0.3 * 32767).astype("<i2").tobytes()


def spoken(kind: Kind, text: str, seconds: float = 0.5) -> Said:
    pcm = tone(seconds)
    if kind == "paused":
        pcm = pcm + bytes(2 * round(0.8 * CALLER_RATE)) + pcm
    return Said(kind, text, "tone", pcm)


SET: dict[Kind, list[Said]] = {
    "question": [spoken("question", "What does the premium plan cost?")],
    "paused": [spoken("paused", "I would like to know, what the Premium plan includes.")],
    "backchannel": [spoken("backchannel", "Uh-huh.", 0.3)],
    "noise": [Said("noise", "", "", noise_burst(0))],
    "interruption": [spoken("interruption", "Stop please. What does it cost?")],
}


def test_the_plan_says_every_kind_and_rotates_with_the_trial() -> None:
    full = plan_call(SET, 0)
    assert [said.kind for said in full.over_answer] == ["backchannel"] * 3 + ["noise", "interruption"]
    assert len(full.paused) == 2 and len(full.questions) == 3
    quick = plan_call(SET, 1, quick=True)
    assert [said.kind for said in quick.over_answer] == ["backchannel", "interruption"]
    assert len(quick.paused) == 1


def test_a_noise_burst_is_a_seeded_short_rustle_at_its_level() -> None:
    burst = noise_burst(3)
    samples = np.frombuffer(burst, dtype="<i2").astype(np.float64) / 32767
    assert len(samples) == round(0.3 * CALLER_RATE)
    middle = samples[len(samples) // 4 : -len(samples) // 4]  # past the fades
    assert 20 * np.log10(np.sqrt(np.mean(middle**2))) == pytest.approx(NOISE_DBFS, abs=1.5)
    assert burst == noise_burst(3) and burst != noise_burst(4)


class ToySystem:
    """Hears loud 20 ms frames as speech; 0.2 s of quiet ends a turn (a final transcript, then 6 s of answer
    audio at once); speech while an answer is out interrupts it."""

    def __init__(self) -> None:
        self.speaking = self.answering = False
        self.quiet = 0

    async def __call__(self, socket: ServerConnection) -> None:
        await socket.recv()  # start
        await socket.send(json.dumps({"type": "listening", "sample_rate": CALLER_RATE}))
        async for frame in socket:
            assert isinstance(frame, bytes)
            loud = np.abs(np.frombuffer(frame, dtype="<i2")).max(initial=0) > 1000
            if loud and not self.speaking:
                self.speaking, self.quiet = True, 0
                if self.answering:
                    self.answering = False
                    await socket.send(json.dumps({"type": "interrupted"}))
            elif loud:
                self.quiet = 0
            elif self.speaking:
                self.quiet += 1
                if self.quiet == 10:
                    self.speaking, self.answering = False, True
                    await socket.send(json.dumps({"type": "transcript", "role": "user", "final": True}))
                    for _ in range(60):
                        await socket.send(tone(0.1, ANSWER_RATE))


class StandIn:
    """What the script tells the model to answer, in order."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def update_config(self, **config: Any) -> None:
        self.texts.append(config["text"])


async def _call(plan: Any) -> tuple[Any, StandIn]:
    model = StandIn()
    async with serve(ToySystem(), "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        link = await CallLink.open(f"ws://127.0.0.1:{port}")
        try:
            await run_call(link, model, plan, lambda line: None)
        finally:
            log = await link.close()
    return log, model


def test_one_call_to_a_toy_system_gives_every_outcome_it_was_built_for() -> None:
    log, model = asyncio.run(_call(plan_call(SET, 0, quick=True)))
    assert [said.kind for said in log.said] == [
        "question",
        "backchannel",
        "question",
        "interruption",
        "paused",
    ]
    question, backchannel, _again, interruption, paused = turn_figures(log)
    assert question.finals == 1 and question.voice_to_voice_s is not None and question.voice_to_voice_s > 0
    assert backchannel.over_answer and backchannel.stopped  # the toy stops for anything
    assert interruption.stopped and interruption.reaction_s is not None
    assert paused.cut and paused.finals == 2  # 0.2 s of quiet ends its turns: the 0.8 s pause splits it
    assert model.texts == [LONG_ANSWER, ACK, LONG_ANSWER, REPLY, PAUSED_REPLY]


def test_the_end_of_turn_switch_is_one_setting() -> None:
    from strands_voice.listen import ListenSettings

    assert listen_settings("model") == ListenSettings()
    assert listen_settings("silence") == ListenSettings(end_of_turn="silence")


def _entry(name: str, v2v: float, cut: int, peak: float) -> dict[str, Any]:
    ms = {"median": v2v, "p95": v2v + 100, "n": 2, "values": [v2v, v2v + 100]}
    return {
        "name": name,
        "voice_to_voice_ms": ms,
        "barge_in_ms": None,
        "end_of_turn_question_ms": ms,
        "cut_mid_sentence": {"n": cut, "of": 2},
        "backchannel_stops": {"n": 0, "of": 0},
        "peak_mb": peak,
        "load_s": 9.0,
        "setup": f"{name}'s setup",
    }


def _results() -> dict[str, Any]:
    return {
        "command": "strands-voice bench --talk --peers",
        "config": {"trials": 1, "warmups": 1, "voices": ["jm_kumo"]},
        "machine": {"cpu_model": "test CPU", "cpu_isa": {"isa": "avx2"}, "cpu_cores": 2},
        "peers": [_entry("strands-voice", 1200.0, 0, 900.0), _entry("pipecat", 3000.0, 2, 500.0)],
    }


def test_the_peers_table_has_a_row_per_measured_figure_and_names_the_lowest() -> None:
    table = format_talk_peers(_results())
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| ")}
    v2v = next(line for label, line in rows.items() if label.startswith("voice-to-voice"))
    assert v2v.endswith("| 1,200 / 1,300 ms | 3,000 / 3,100 ms | strands-voice |")
    cut = next(line for label, line in rows.items() if label.startswith("paused sentences cut"))
    assert cut.endswith("| 0 of 2 | 2 of 2 | strands-voice |")
    assert rows["peak memory (resident, the system's process tree)"].endswith("| 900 MB | 500 MB | pipecat |")
    assert not any(label.startswith(("barge-in", "backchannels")) for label in rows)  # not measured: no row
    assert "test CPU (avx2)" in table and "- pipecat: pipecat's setup" in table


def test_the_turn_table_says_when_there_is_no_turn_model_and_gives_the_sweep() -> None:
    results = {
        **_results(),
        "turn_model": False,
        "silence_sweep": {
            "longest_pauses_s": [0.8, 0.9],
            "timer_s_at_target": 0.95,
            "delay_ms_at_target": 1100.0,
        },
    }
    table = format_turns(results)
    assert "The turn-end model is not installed here" in table
    assert "a timer of 0.95 s, an end-of-turn delay of 1100.0 ms" in table


def test_the_peers_plot_is_a_png(tmp_path: Path) -> None:
    target = write_talk_peers_plot(_results(), tmp_path / "talk_peers.png")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_process_trees_memory_is_sampled_and_its_peak_kept() -> None:
    assert (tree_rss_mb(os.getpid()) or 0.0) > 1.0
    assert tree_rss_mb(2**22 + 1) is None  # above Linux's pid_max: never a process
    watch = MemoryWatch(os.getpid())
    assert watch.sample() == watch.peak_mb and (watch.peak_mb or 0.0) > 1.0
    assert cpu_instruction_set()["isa"]


def test_pipecats_serializer_carries_raw_pcm_and_the_events_the_harness_reads() -> None:
    require("pipecat", "peers")
    with warnings.catch_warnings():  # pipecat 1.14's services warn about their own deprecations on import
        warnings.simplefilter("ignore", DeprecationWarning)
        from pipecat.frames.frames import (
            InputAudioRawFrame,
            InterruptionFrame,
            OutputAudioRawFrame,
            OutputTransportMessageUrgentFrame,
        )
        from strands_voice_tools.bench.peer_pipecat import RawPcmSerializer

    serializer = RawPcmSerializer()
    audio = tone(0.1, ANSWER_RATE)

    async def check() -> None:
        assert await serializer.serialize(OutputAudioRawFrame(audio, ANSWER_RATE, 1)) == audio
        assert json.loads(str(await serializer.serialize(InterruptionFrame()))) == {"type": "interrupted"}
        message = OutputTransportMessageUrgentFrame(message={"type": "listening"})
        assert json.loads(str(await serializer.serialize(message))) == {"type": "listening"}
        rtvi = OutputTransportMessageUrgentFrame(message={"label": "rtvi-ai", "type": "bot-llm-text"})
        assert await serializer.serialize(rtvi) is None
        frame = await serializer.deserialize(audio)
        assert isinstance(frame, InputAudioRawFrame) and frame.sample_rate == CALLER_RATE
        assert await serializer.deserialize(json.dumps({"type": "start"})) is None

    asyncio.run(check())


def test_the_peers_pipeline_stays_out_of_the_default_install() -> None:
    """The ``peers`` group is opt-in: neither the default groups nor the library without extras hold Pipecat
    or kokoro-onnx (the library's ``listen`` extra reads Smart Turn's file from the pipecat-ai wheel)."""
    uv = os.environ.get("UV") or shutil.which("uv")  # `uv run` sets UV to its own binary
    assert uv, "uv is needed to read the lock (pip install uv)"
    root = Path(__file__).resolve().parents[2]

    def exported(*options: str) -> set[str]:
        command = [uv, "export", "--frozen", "--no-hashes", "--no-emit-project", *options]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True, check=True, timeout=120)
        return {line.split("==")[0].strip().lower() for line in result.stdout.splitlines() if "==" in line}

    default, library = exported(), exported("--package", "strands-voice", "--no-dev")
    assert (
        "pytest" in default and "numpy" in library
    )  # the exports are the real sets (dev is a default group)
    for name in ("pipecat-ai", "kokoro-onnx", "numba"):
        assert name not in default and name not in library
