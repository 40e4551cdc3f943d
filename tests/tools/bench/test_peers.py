"""``bench --peers``: the alternation, the summaries, the table and plot, the kokoro-onnx worker's line
protocol, and one real run of both peers on the short sentence (the ``peers`` group)."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from optional_groups import require
from strands_voice_tools.bench import add_arguments
from strands_voice_tools.bench.peer_kokoro_onnx import SAMPLE_RATE, serve, time_stream
from strands_voice_tools.bench.peers import (
    PEERS,
    PeerRun,
    PeersConfig,
    _alternate,
    bench_peers,
    peak_rss_mb,
    summarize_peer,
    trial_order,
)
from strands_voice_tools.bench.peers_report import format_peers, lower_wins, write_peers_plot
from strands_voice_tools.bench.texts import HEARD_SHORT


def test_the_peers_swap_places_every_trial() -> None:
    assert [trial_order(trial) for trial in range(3)] == [
        ("strands-voice", "kokoro-onnx"),
        ("kokoro-onnx", "strands-voice"),
        ("strands-voice", "kokoro-onnx"),
    ]


class _Recorded:
    """A peer that answers at once with a fixed run and records what it was asked, in one shared log."""

    def __init__(self, name: str, log: list[tuple[str, str]], run: PeerRun) -> None:
        self.name = name
        self.load_s: float | None = 0.0
        self._log = log
        self._run = run

    @property
    def pid(self) -> int:
        return os.getpid()

    async def start(self) -> None:
        return None

    async def measure(self, text: str, voice: str) -> PeerRun:
        self._log.append((self.name, text))
        return self._run

    async def stop(self) -> None:
        return None


def test_trials_alternate_per_text_and_warm_ups_are_dropped() -> None:
    log: list[tuple[str, str]] = []
    peers: dict[str, Any] = {name: _Recorded(name, log, PeerRun(0.1, 0.2, 1.0, 2.0)) for name in PEERS}
    config = PeersConfig(trials=2, warmups=1, texts=(("a", "one."), ("b", "two.")))
    runs = asyncio.run(_alternate(peers, config, lambda line: None))
    sv, ko = PEERS
    assert log == [
        (sv, "one."), (ko, "one."), (ko, "one."), (sv, "one."), (sv, "one."), (ko, "one."),
        (sv, "two."), (ko, "two."), (ko, "two."), (sv, "two."), (sv, "two."), (ko, "two."),
    ]  # fmt: skip
    counts = {name: {label: len(items) for label, items in by_text.items()} for name, by_text in runs.items()}
    expected = {"warm-up/a": 1, "a": 2, "warm-up/b": 1, "b": 2}
    assert counts == {sv: expected, ko: expected}


def test_summary_takes_medians_and_the_last_texts_real_time_factor() -> None:
    texts = (("short", "x" * 44), ("answer", "y" * 267))
    runs = {
        "short": [
            PeerRun(0.100, 0.120, 1.0, 2.5),
            PeerRun(0.300, None, 1.2, 2.5),
            PeerRun(0.200, 0.240, 1.1, 2.5),
        ],
        "answer": [PeerRun(0.5, 0.6, 8.0, 16.0), PeerRun(0.6, 0.7, 4.0, 16.0)],
    }
    entry = summarize_peer("kokoro-onnx", texts, runs)
    assert entry["first_audio_ms"] == 200.0
    assert entry["first_heard_ms"] == 180.0  # the trial without an audible sound is left out
    assert entry["first_audio_ms_answer"] == 550.0
    assert entry["rtf"] == 0.375 and entry["rtf_text"] == "answer"  # median of 0.5 and 0.25
    assert entry["texts"]["short"]["chars"] == 44
    assert entry["texts"]["answer"]["total_ms"] == [8000.0, 4000.0]
    assert entry["g2p"] == "espeak-ng (phonemizer)"


def test_peak_memory_is_read_for_a_live_process_and_none_for_a_gone_one() -> None:
    peak = peak_rss_mb(os.getpid())
    if sys.platform == "linux":
        assert peak is not None and peak > 1.0
    assert peak_rss_mb(2**22 + 1) is None  # above Linux's pid_max: never a process


def test_lower_wins_needs_every_value_and_no_tie() -> None:
    assert lower_wins({"a": 1.0, "b": 2.0}) == "a"
    assert lower_wins({"a": 3.0, "b": 2.0}) == "b"
    assert lower_wins({"a": 1.0, "b": None}) is None
    assert lower_wins({"a": 1.0, "b": 1.0}) is None


def _results() -> dict[str, Any]:
    texts = (("short", HEARD_SHORT),)
    fast = summarize_peer("strands-voice", texts, {"short": [PeerRun(0.15, 0.17, 1.0, 2.5)]})
    slow = summarize_peer("kokoro-onnx", texts, {"short": [PeerRun(2.0, 2.1, 2.0, 2.5)]})
    return {
        "command": "strands-voice bench --peers --quick",
        "config": {"trials": 1, "warmups": 0, "voice": "jm_kumo"},
        "machine": {"cpu_model": "test CPU", "kokoro_onnx": "0.6.1"},
        "peers": [{**fast, "peak_mb": 500.0, "load_s": 8.0}, {**slow, "peak_mb": 300.0, "load_s": 3.0}],
    }


def test_table_has_a_row_per_measured_figure_and_names_the_lower() -> None:
    table = format_peers(_results())
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert rows["first audio, 44-char sentence"].endswith("| 150 ms | 2,000 ms | strands-voice |")
    assert rows["peak memory (process VmHWM)"].endswith("| 500 MB | 300 MB | kokoro-onnx |")
    assert "real-time factor (time to the end / audio seconds), short" in rows
    assert "first audio, 197-char sentence" not in rows  # not measured: no row
    assert "command: strands-voice bench --peers --quick" in table


def test_plot_is_a_png(tmp_path: Path) -> None:
    target = write_peers_plot(_results(), tmp_path / "peers.png")
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class _FakeKokoro:
    """kokoro-onnx's streaming surface: 0.1 s of silence then 0.2 s of tone, in two chunks."""

    class tokenizer:
        @staticmethod
        def phonemize(text: str) -> str:
            return text.lower()

    async def create_stream(self, text: str, voice: str) -> AsyncIterator[tuple[np.ndarray, int]]:
        if voice != "jm_kumo":
            raise ValueError(f"Voice {voice} not found in available voices")
        yield np.zeros(SAMPLE_RATE // 10, dtype=np.float32), SAMPLE_RATE
        tone = 0.5 * np.sin(np.arange(SAMPLE_RATE // 5, dtype=np.float32) * 0.1)
        yield tone.astype(np.float32), SAMPLE_RATE


def test_a_stream_is_timed_to_its_end_with_its_first_sound() -> None:
    timing = asyncio.run(time_stream(_FakeKokoro(), "Hello.", "jm_kumo"))
    assert timing.chunks == 2 and timing.phonemes == len("Hello.")
    assert timing.audio_s == pytest.approx(0.3)
    assert timing.first_heard_s is not None
    # A player starting at the first chunk plays 0.1 s of silence before the sound.
    assert timing.first_heard_s >= timing.first_audio_s + 0.1 - 1e-9
    assert timing.total_s >= timing.first_audio_s


def test_the_worker_answers_a_line_per_request_and_reports_a_failure() -> None:
    lines = [json.dumps({"text": "Hi.", "voice": "jm_kumo"}), "", json.dumps({"text": "Hi.", "voice": "x"})]
    requests = io.StringIO("\n".join(lines) + "\n")
    replies = io.StringIO()
    serve(_FakeKokoro(), requests, replies)
    first, second = (json.loads(line) for line in replies.getvalue().splitlines())
    assert first["chunks"] == 2 and first["audio_s"] == pytest.approx(0.3)
    assert second == {"error": "ValueError: Voice x not found in available voices"}


def test_both_peers_speak_the_short_sentence_side_by_side() -> None:
    require("kokoro_onnx", "peers")
    config = PeersConfig(trials=1, warmups=0, texts=(("short", HEARD_SHORT),))
    results = asyncio.run(bench_peers(config, lambda line: None, argv=["bench", "--peers"]))
    assert results["command"] == "strands-voice bench --peers"
    assert [peer["name"] for peer in results["peers"]] == list(PEERS)
    for peer in results["peers"]:
        # The same sentence, model and voice: 2-4 s of speech from either (each trims or pads its own way).
        assert 2.0 < peer["texts"]["short"]["audio_s"][0] < 4.0, peer
        assert peer["first_audio_ms"] > 0 and peer["first_heard_ms"] >= peer["first_audio_ms"]
        assert peer["peak_mb"] is None or peer["peak_mb"] > 100.0
        assert peer["warm_up_first_audio_ms"] == {}  # no warm-up trial was asked for


def test_schedule_session_counts_are_parsed_and_checked() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["--schedule", "--sessions", "1,2,3,4"]).sessions == (1, 2, 3, 4)
    assert parser.parse_args(["--peers"]).sessions is None
    for bad in ("0,1", "one", ""):
        with pytest.raises(SystemExit):
            parser.parse_args(["--schedule", "--sessions", bad])


def test_kokoro_onnx_runs_on_the_endpoints_graph_with_the_same_sound_length() -> None:
    require("kokoro_onnx", "peers")
    from strands_voice_tools.bench.peer_kokoro_onnx import load_kokoro_onnx

    stock, tuned = load_kokoro_onnx(), load_kokoro_onnx(endpoint_graph=True)
    assert stock.sess is not tuned.sess
    timings = [asyncio.run(time_stream(kokoro, HEARD_SHORT, "jm_kumo")) for kokoro in (stock, tuned)]
    # The rewrite keeps the graph's arithmetic (the endpoint's tests check its samples): the same length.
    assert timings[0].audio_s == timings[1].audio_s > 2.0
