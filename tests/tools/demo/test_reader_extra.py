"""``strands-voice demo --voice jf_alpha`` without the Japanese reader says which command adds it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from strands_voice_protocol.errors import MissingDependencyError
from strands_voice_tools import demo
from strands_voice_tools.demo import cli as demo_cli


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_a_japanese_voice_without_its_reader_fails_first_naming_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # An install without the `ja` group reads every installed language but Japanese.
    monkeypatch.setattr(demo_cli, "installed_languages", lambda: frozenset({"a", "b"}))
    assert demo.run(_args("--voice", "jf_alpha", "--out", str(tmp_path))) == 1
    error = capsys.readouterr().err
    assert "--voice jf_alpha" in error and "uv sync --group ja" in error, error
    assert not any(tmp_path.iterdir())  # nothing started, nothing written


def test_only_a_voice_whose_reader_is_missing_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_cli, "installed_languages", lambda: frozenset({"a"}))
    demo_cli.check_reader(None)
    demo_cli.check_reader("af_heart(2)+jf_alpha")  # the first voice's language: English
    with pytest.raises(MissingDependencyError, match="uv sync --group ja"):
        demo_cli.check_reader("jf_alpha(2)+af_heart")
