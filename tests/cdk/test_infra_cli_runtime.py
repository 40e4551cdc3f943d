"""``agent-infra talk`` and ``agent-infra page``: the deployed runtime found by name, then the
``strands-voice`` command that talks to it run in the process's place (or printed)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from strands_voice_infra import agent_cli, runtime_cli, status

RUNTIME_ARN = "arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/strands_voice_agent-abc123"


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A runtime named as agent-infra names it, and an account to find it in (no AWS reached)."""
    asked: list[str] = []

    def find(target: Any, name: str) -> dict[str, str] | None:
        asked.append(name)
        return {"agentRuntimeName": name, "agentRuntimeArn": RUNTIME_ARN}

    monkeypatch.setattr(status, "find_runtime", find)
    monkeypatch.setattr(
        runtime_cli.cli, "target_from_args", lambda args: status.AwsTarget(None, "123456789012", "eu-west-1")
    )
    return asked


def test_talk_runs_strands_voice_talk_with_the_runtime_found_by_name(
    deployed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(runtime_cli, "launch", lambda words, env: ran.append((list(words), env)))
    monkeypatch.setattr(runtime_cli.shutil, "which", lambda name: f"/usr/bin/{name}")

    code = agent_cli.main(
        ["talk", "--profile", "dev", "--", "--input", "q.wav", "--output", "a.wav"], stdout=io.StringIO()
    )

    assert code == 0 and deployed == ["strands_voice_agent"]
    words, env = ran[0]
    assert words == [
        "strands-voice", "talk", "--runtime-arn", RUNTIME_ARN, "--region", "eu-west-1",
        "--input", "q.wav", "--output", "a.wav",
    ]  # fmt: skip
    assert env["AWS_PROFILE"] == "dev"


def test_page_prints_the_command_with_an_arn_given(deployed: list[str]) -> None:
    out = io.StringIO()
    code = agent_cli.main(
        ["page", "--runtime-arn", RUNTIME_ARN, "--endpoint-url", "http://127.0.0.1:9", "--print"], stdout=out
    )
    assert code == 0 and deployed == []
    assert out.getvalue().strip() == (
        f"strands-voice demo --serve --port 8000 --runtime-arn {RUNTIME_ARN} --endpoint-url http://127.0.0.1:9"
    )


def test_without_strands_voice_the_command_is_said_in_one_line(
    deployed: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runtime_cli.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(["talk"], stdout=io.StringIO())
    assert caught.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("agent-infra: error: strands-voice is not installed here")
    assert f"strands-voice talk --runtime-arn {RUNTIME_ARN} --region eu-west-1" in err and "\n" not in err


def test_no_runtime_deployed_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def none(target: Any, name: str) -> None:
        return None

    monkeypatch.setattr(status, "find_runtime", none)
    monkeypatch.setattr(
        runtime_cli.cli, "target_from_args", lambda args: status.AwsTarget(None, "123456789012", "eu-west-1")
    )
    with pytest.raises(SystemExit):
        agent_cli.main(["page"], stdout=io.StringIO())
    assert capsys.readouterr().err.strip() == (
        "agent-infra: error: no runtime strands_voice_agent in eu-west-1; deploy it (agent-infra deploy)"
    )
