"""The ``strands-voice`` command line: subcommands load lazily and errors are one line."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_tools import cli


def test_no_subcommand_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_help_does_not_import_the_commands() -> None:
    code = (
        "import sys; from strands_voice_tools import cli; cli.build_parser([]); "
        "print(any(m in sys.modules for m in "
        "('strands_voice_tools.demo', 'strands_voice_tools.bench', 'strands')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == "False"


def test_the_chosen_subcommand_gets_its_options() -> None:
    args = cli.build_parser(["demo", "--mode", "batch"]).parse_args(["demo", "--mode", "batch"])
    assert args.command == "demo" and args.mode == "batch"


def test_a_library_error_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from strands_voice_tools import demo

    def failing_run(args: argparse.Namespace) -> int:
        raise StrandsVoiceError("the endpoint failed to start: use another --tts-port")

    monkeypatch.setattr(demo, "run", failing_run)
    assert cli.main(["demo"]) == 1
    err = capsys.readouterr().err
    assert err == "strands-voice: error: the endpoint failed to start: use another --tts-port\n"


@pytest.mark.parametrize(
    ("script", "distribution"),
    [
        ("strands-voice", "strands-voice"),
        ("kokoro-endpoint", "kokoro-endpoint"),
        ("speech-infra", "strands-voice-infra"),
        ("agent-infra", "strands-voice-infra"),
    ],
)
def test_every_cli_has_version(script: str, distribution: str) -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [str(Path(sys.executable).parent / script), "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{script} {version(distribution)}"


def test_demo_defaults_to_the_scripted_stand_in_even_with_aws_credentials(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from strands_voice_tools.demo import cli as demo_cli

    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(name, value)
    asked: list[str | None] = []

    def fake_run_demo(prompt: str, modes: Any, **kwargs: Any) -> Any:
        asked.append(kwargs["model_spec"])
        raise StrandsVoiceError("stop here")

    monkeypatch.setattr(demo_cli, "run_demo", fake_run_demo)
    assert cli.main(["demo"]) == 1
    assert asked == ["scripted"]
    err = capsys.readouterr().err
    assert "model: scripted, the built-in offline stand-in" in err and "--model bedrock:" in err


def test_region_flag_sets_aws_region_for_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from strands_voice_tools import demo

    monkeypatch.setenv("AWS_REGION", "us-east-1")
    seen: list[str] = []
    monkeypatch.setattr(demo, "run", lambda args: seen.append(os.environ["AWS_REGION"]) or 0)
    assert cli.main(["demo", "--region", "eu-west-1"]) == 0
    assert seen == ["eu-west-1"]


@pytest.mark.parametrize(
    ("env", "spec", "expected"),
    [
        ({"AWS_REGION": "eu-west-1"}, "bedrock:amazon.nova-lite-v1:0", "eu-west-1"),
        ({"AWS_DEFAULT_REGION": "eu-west-1"}, "bedrock:amazon.nova-lite-v1:0", "eu-west-1"),
        (
            {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-1"},
            "bedrock:amazon.nova-lite-v1:0",
            "eu-west-1",
        ),
        ({"AWS_REGION": "us-east-1"}, "bedrock:amazon.nova-lite-v1:0?region=ap-south-1", "ap-south-1"),
    ],
    ids=["AWS_REGION", "AWS_DEFAULT_REGION", "both", "spec-option"],
)
def test_bedrock_models_take_the_region_from_either_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], spec: str, expected: str
) -> None:
    """The demo's ``--model bedrock:...`` and the app's model (``VOICE_MODEL``/``BEDROCK_MODEL_ID``)."""
    from agentcore_app.models import create_model
    from moto import mock_aws

    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with mock_aws():
        model = create_model(spec)
    assert model.client.meta.region_name == expected  # type: ignore[attr-defined]
