"""The opt-in dependency groups: a test that needs a missing one skips with the command, and fails in CI."""

from __future__ import annotations

import pytest
from optional_groups import require


def test_a_present_module_is_returned() -> None:
    assert require("json", "dev").dumps([]) == "[]"


def test_missing_module_skips_with_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"`uv sync --group torch`"):
        require("no_such_module_for_this_test", "torch")


def test_missing_module_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"`asr` dependency group"):
        require("no_such_module_for_this_test", "asr")
