"""Tests that need an opt-in dependency group (``torch``, ``asr``, ``browser``): skip locally, fail in CI.

``uv run pytest`` installs only the default groups (``demo`` and ``dev``), so a fresh clone does not
download torch/CUDA, the Whisper model or Playwright. The tests that need one of them skip with the
command that installs it; under CI (``CI`` set, as ``.ci/run`` does after ``uv sync --all-groups``) a
missing group is a failure instead, so CI can never pass by skipping them.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

__all__ = ["require"]


def require(module: str, group: str) -> ModuleType:
    """Import ``module`` from dependency group ``group``, or skip (locally) / fail (under CI) saying how.

    Works at module level (skips the whole test module) and inside tests and fixtures.
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        message = (
            f"{module} is not installed: it is in the `{group}` dependency group; "
            f"run `uv sync --group {group}` (or `uv sync --all-groups` for every opt-in group), "
            "then `uv run pytest`"
        )
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
