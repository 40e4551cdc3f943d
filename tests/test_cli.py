"""The ``strands-voice`` command line: subcommands load lazily and errors are one line."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from strands_voice import cli
from strands_voice.errors import StrandsVoiceError


def test_no_subcommand_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_help_does_not_import_the_commands() -> None:
    code = (
        "import sys; from strands_voice import cli; cli.build_parser([]); "
        "print(any(m in sys.modules for m in ('strands_voice.demo', 'strands_voice.bench', 'strands')))"
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
    from strands_voice import demo

    def failing_run(args: argparse.Namespace) -> int:
        raise StrandsVoiceError("the endpoint failed to start: use another --tts-port")

    monkeypatch.setattr(demo, "run", failing_run)
    assert cli.main(["demo"]) == 1
    err = capsys.readouterr().err
    assert err == "strands-voice: the endpoint failed to start: use another --tts-port\n"
