"""``strands-voice talk --runtime-arn``: the conversation with a deployed runtime, through a local stand-in
of AgentCore's WebSocket data plane that checks the SigV4 signature and relays to the real app's ``/ws``."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from strands_voice_protocol.audio import BYTES_PER_SECOND, write_wav
from strands_voice_protocol.audio.wav import wav_to_pcm16
from support.agentcore_stand_in import stand_in_thread
from support.call import silence, tone
from support.instant_tts import SECONDS_PER_REQUEST
from support.runtime_app import ARN, aws_env, runtime_app

pytestmark = pytest.mark.timeout(120)

QUESTION = "What is the capital of France?"


def _question_wav(tmp_path: Path) -> Path:
    path = tmp_path / "question.wav"
    write_wav(path, silence(0.3) + tone(1.0) + silence(0.2), sample_rate=16000)
    return path


def test_talk_holds_the_call_with_a_runtime_through_the_signed_websocket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from strands_voice_tools.cli import main

    answer = tmp_path / "answer.wav"
    with runtime_app([QUESTION]) as (app_ws, _app), stand_in_thread(app_ws) as stand_in:
        aws_env(monkeypatch, stand_in.endpoint_url)
        code = main(
            ["talk", "--runtime-arn", ARN, "--input", str(_question_wav(tmp_path)), "--output", str(answer)]
        )

    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.splitlines()[:2] == [f"you: {QUESTION}", f"agent: Heard: {QUESTION}."]
    assert stand_in.refused == []
    assert len(stand_in.sessions) == 1 and stand_in.sessions[0].startswith("strands-voice-talk-")
    assert len(stand_in.sessions[0]) >= 33
    assert stand_in.paths == [f"/runtimes/{quote(ARN, safe='')}/ws?qualifier=DEFAULT"]
    pcm = wav_to_pcm16(answer.read_bytes())
    assert len(pcm) > 0 and len(pcm) % int(SECONDS_PER_REQUEST * BYTES_PER_SECOND) == 0


def test_a_wrong_secret_key_is_refused_and_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from strands_voice_tools.cli import main

    answer = tmp_path / "answer.wav"
    with runtime_app([QUESTION]) as (app_ws, _app), stand_in_thread(app_ws) as stand_in:
        aws_env(monkeypatch, stand_in.endpoint_url, secret="not-the-secret-key")
        code = main(
            ["talk", "--runtime-arn", ARN, "--input", str(_question_wav(tmp_path)), "--output", str(answer)]
        )

    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.splitlines() == [
        "strands-voice: error: the runtime refused the connection (HTTP 403: The request signature we "
        "calculated does not match the signature you provided.)"
    ]
    assert stand_in.sessions == [] and len(stand_in.refused) == 1
    assert not answer.exists()


def test_another_endpoint_url_on_the_command_line_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from strands_voice_tools.cli import main

    answer = tmp_path / "answer.wav"
    with runtime_app([QUESTION]) as (app_ws, _app), stand_in_thread(app_ws) as stand_in:
        aws_env(monkeypatch, "http://127.0.0.1:9")  # nothing listens there
        args = ["talk", "--runtime-arn", ARN, "--endpoint-url", stand_in.endpoint_url]
        code = main([*args, "--input", str(_question_wav(tmp_path)), "--output", str(answer)])

    assert code == 0, capsys.readouterr().err
    assert len(stand_in.sessions) == 1


def test_not_a_runtime_arn_is_one_line(capsys: Any, tmp_path: Path) -> None:
    from strands_voice_tools.cli import main

    wav = _question_wav(tmp_path)
    code = main(["talk", "--runtime-arn", "arn:aws:s3:::bucket", "--input", str(wav), "--output", str(wav)])

    assert code == 1
    assert capsys.readouterr().err.startswith("strands-voice: error: not an AgentCore runtime ARN")
