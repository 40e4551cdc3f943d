"""The table and the PNG, rendered from a small results mapping of the shape ``run_benchmark`` returns."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from strands_voice_protocol.errors import MissingDependencyError, StrandsVoiceError
from strands_voice_tools import bench
from strands_voice_tools.bench.config import BenchConfig
from strands_voice_tools.bench.plot import write_heard_plot, write_plot
from strands_voice_tools.bench.report import format_heard_steps, format_table
from strands_voice_tools.bench.stats import summarize
from strands_voice_tools.bench.targets import evaluate_targets
from strands_voice_tools.cli import build_parser


def _timeline(first_audio: float) -> dict[str, Any]:
    return {
        "ttfa_s": first_audio,
        "first_chunk_text_complete_s": 0.6,
        "text": [[0.1 * i, 100.0 * i, 10 * i] for i in range(1, 51)],
        "audio": [
            [first_audio + 0.5 * i, 1000 * (first_audio + 0.5 * i), 0.9 * (i + 1), i // 4] for i in range(12)
        ],
        "playback": [[first_audio, first_audio + 10.8]],
        "stall_s": 0.0,
        "stalls": 0,
        "total_s": first_audio + 6.0,
    }


def _heard(short: float = 520.0, long: float = 610.0, gap: float = 400.0) -> dict[str, Any]:
    return {
        "query": "",
        "short_chars": 44,
        "long_chars": 197,
        "short_ttfb_ms": summarize([short - 20, short - 10]),
        "short_heard_ms": summarize([short, short]),
        "long_ttfb_ms": summarize([long - 20, long - 10]),
        "long_heard_ms": summarize([long, long]),
        "ratio_long_over_short_heard": long / short,
        "lead_silence_ms": summarize([10.0, 20.0]),
        "sentence_gap_ms": summarize([gap, gap]),
    }


def _results(*, opus_bytes: float) -> dict[str, Any]:
    pcm = 64_100.0
    results: dict[str, Any] = {
        "config": {"quick": True},
        "machine": {"cpu_model": "Test CPU", "cpu_cores": 2, "engine": "onnx", "voice": "jm_kumo"},
        "tts_only": {
            "text_chars": 267,
            "first_sentence_chars": 82,
            "whole_ttfa_ms": summarize([300.0, 310.0]),
            "first_sentence_ttfa_ms": summarize([290.0, 295.0]),
            "ratio_whole_over_first": 305.0 / 292.5,
        },
        "end_to_end": {
            "bidi_ttfa_ms": summarize([900.0, 950.0]),
            "batch_ttfa_ms": summarize([5400.0, 5500.0]),
            "ratio_batch_over_bidi": 5450.0 / 925.0,
            "first_chunk_text_complete_ms": summarize([600.0, 601.0]),
            "engine_first_segment_ms": summarize([280.0, 290.0]),
            "bidi_overhead_over_floor_ms": summarize([41.0, 39.0]),
            "bidi_heard_ms": summarize([930.0, 980.0]),
            "batch_heard_ms": summarize([5430.0, 5530.0]),
            "bidi_heard_over_floor_ms": summarize([60.0, 70.0]),
            "timelines": {"bidi": _timeline(0.9), "batch": _timeline(5.4)},
        },
        "playback": {"bidi_stall_s": summarize([0.0, 0.0]), "batch_stall_s": summarize([0.0, 0.3])},
        "payload": {
            "raw_pcm_bytes_per_s": 48_000,
            "formats": {
                "pcm16": {"bytes_per_audio_s": pcm, "ratio_to_raw_pcm": pcm / 48_000},
                "opus": {"bytes_per_audio_s": opus_bytes, "ratio_to_raw_pcm": opus_bytes / 48_000},
            },
            "opus_share_of_pcm16": opus_bytes / pcm,
        },
        "concurrency": {
            "levels": {
                "1": {"sessions": 1, "samples": 1, "p50_ms": 300.0, "p95_ms": 300.0, "error": None},
                "2": {"sessions": 2, "samples": 2, "p50_ms": 500.0, "p95_ms": 640.0, "error": None},
            }
        },
        "heard": _heard(),
        "duration_s": 1.0,
    }
    results["targets"] = evaluate_targets(results)
    return results


def test_targets_record_where_each_landed() -> None:
    targets = {target["name"]: target for target in _results(opus_bytes=5_000.0)["targets"]}
    assert set(targets) == {
        "e2e_ttfa_ratio_batch_over_bidi",
        "tts_only_ratio_whole_over_first",
        "bidi_overhead_over_floor_ms",
        "bidi_playback_stall_s",
        "opus_share_of_pcm16",
        "heard_ratio_long_over_short",
        "heard_lead_silence_ms",
        "heard_sentence_gap_ms",
        "bidi_heard_over_floor_ms",
    }
    assert targets["heard_ratio_long_over_short"]["met"] is True  # 1.17 <= 1.3
    assert targets["heard_lead_silence_ms"]["value"] == 15.0
    assert targets["heard_sentence_gap_ms"]["met"] is True  # 400 <= 500
    assert targets["bidi_heard_over_floor_ms"]["met"] is False  # 65 > 50
    assert targets["e2e_ttfa_ratio_batch_over_bidi"]["met"] is True  # 5.9x >= 5
    assert targets["tts_only_ratio_whole_over_first"]["met"] is True  # 1.04 <= 1.15
    assert targets["bidi_overhead_over_floor_ms"]["met"] is False  # 40 ms > 30 ms
    assert targets["bidi_overhead_over_floor_ms"]["value"] == 40.0
    assert targets["bidi_playback_stall_s"]["met"] is True
    assert targets["opus_share_of_pcm16"]["met"] is True
    missed = {target["name"]: target for target in _results(opus_bytes=9_000.0)["targets"]}
    assert missed["opus_share_of_pcm16"]["met"] is False  # 14% > 12%


def test_a_floor_above_the_ttfa_is_no_verdict() -> None:
    results = _results(opus_bytes=5_000.0)
    results["end_to_end"]["bidi_overhead_over_floor_ms"] = summarize([-500.0, -400.0])
    overhead = next(t for t in evaluate_targets(results) if t["name"] == "bidi_overhead_over_floor_ms")
    assert overhead["met"] is False
    assert "does not fit the run" in overhead["note"]
    results["end_to_end"]["bidi_overhead_over_floor_ms"] = summarize([-4.0, 12.0])  # timer jitter
    overhead = next(t for t in evaluate_targets(results) if t["name"] == "bidi_overhead_over_floor_ms")
    assert overhead["met"] is True


def test_table_lists_every_figure_and_marks_misses() -> None:
    table = format_table(_results(opus_bytes=5_000.0))
    assert "Test CPU, 2 cores" in table
    assert "TTFA whole text (267 chars, 1 message)" in table
    assert "5.89x" in table
    assert "MISSED" in table  # the 40 ms overhead
    assert "7.8%" in table  # opus share
    assert "2 sessions: TTFA p50 / p95 (n=2)" in table
    assert "first HEARD sound, 197-char unpunctuated" in table
    assert "first HEARD sound bidi (client)" in table
    assert "targets met: 7/9" in table


def test_plot_writes_a_png(tmp_path: Path) -> None:
    path = write_plot(_results(opus_bytes=5_000.0), tmp_path / "bench.png")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000  # four panels of drawing, not an empty canvas


def test_heard_steps_table_and_plot(tmp_path: Path) -> None:
    results = {
        "machine": {"cpu_model": "Test CPU", "cpu_cores": 2},
        "heard_steps": {"steps": {"raw": _heard(900.0, 3000.0, 930.0), "trimmed": _heard(530.0, 600.0)}},
    }
    table = format_heard_steps(results)
    assert table.splitlines()[1].split() == ["figure", "raw", "trimmed"]
    gap_row = next(line for line in table.splitlines() if line.startswith("silence heard between"))
    assert gap_row.split()[-4:] == ["930", "ms", "400", "ms"]
    data = write_heard_plot(results, tmp_path / "heard.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_quick_form_is_smaller_than_the_full_one() -> None:
    quick, full = BenchConfig.quick_form(), BenchConfig()
    assert quick.quick and not full.quick
    assert 1 <= quick.trials < full.trials == 5
    assert full.concurrency_levels == (1, 2, 4, 8)
    assert quick.concurrency_levels == (1, 2)
    assert full.answer_text is None and quick.answer_text


def test_plot_without_matplotlib_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    with pytest.raises(MissingDependencyError, match=r"strands-voice\[bench\]"):
        write_plot(_results(opus_bytes=5_000.0), tmp_path / "bench.png")
    assert not (tmp_path / "bench.png").exists()


def test_bench_refuses_zero_trials_before_starting_anything() -> None:
    argv = ["bench", "--quick", "--trials", "0"]
    with pytest.raises(StrandsVoiceError, match="--trials"):
        bench.run(build_parser(argv).parse_args(argv))
