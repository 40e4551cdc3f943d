"""The one way a test skips: locally it skips with the command that fixes it, under CI it fails.

``uv run pytest`` installs only the default groups (``demo`` and ``dev``), so a fresh clone does not
download torch/CUDA, the Whisper model or Playwright. The tests that need an opt-in group (``torch``,
``asr``, ``browser``) skip with the command that installs it; under CI (``CI`` set) a skip is a failure
instead, so CI can never pass by skipping. ``.ci/run`` first runs the README's ``uv run pytest`` in a
default-groups environment with ``CI`` unset (the newcomer's path: these tests skip), then installs every
group and runs exactly the tests that skipped, with ``CI`` set.

``tests/test_test_hygiene.py`` checks that no test calls ``pytest.skip``/``pytest.importorskip`` itself and
that no test module imports an opt-in package at module level.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

__all__ = ["require", "skip_or_fail"]


def skip_or_fail(message: str) -> NoReturn:
    """Skip with ``message`` (locally), or fail with it under CI (``CI`` set).

    Works at module level (skips the whole test module) and inside tests and fixtures.
    """
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require(module: str, group: str) -> ModuleType:
    """Import ``module`` from dependency group ``group``, or skip (locally) / fail (under CI) saying how."""
    try:
        return importlib.import_module(module)
    except ImportError:
        skip_or_fail(
            f"{module} is not installed: it is in the `{group}` dependency group; "
            f"run `uv sync --group {group}` (or `uv sync --all-groups` for every opt-in group), "
            "then `uv run pytest`"
        )
