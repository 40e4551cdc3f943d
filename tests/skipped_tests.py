"""A pytest plugin that lists every skipped test, for ``.ci/run``'s second stage.

``.ci/run`` first runs the README's ``uv run pytest`` in a default-groups environment, where the tests that
need an opt-in group skip; it names a file in ``STRANDS_VOICE_SKIPPED_TESTS`` and this plugin appends each
skipped test's node id to it (a skip in a fixture, or of a whole module at collection, counts too). The
second stage installs every group and runs exactly those node ids with ``CI`` set, where a skip fails.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["SKIPPED_TESTS_ENV", "pytest_collectreport", "pytest_runtest_logreport"]

SKIPPED_TESTS_ENV = "STRANDS_VOICE_SKIPPED_TESTS"


def _record(report: pytest.CollectReport | pytest.TestReport) -> None:
    path = os.environ.get(SKIPPED_TESTS_ENV)
    if path and report.skipped and not hasattr(report, "wasxfail"):
        with open(path, "a", encoding="utf-8") as listing:
            listing.write(report.nodeid + "\n")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A module skipped while it was collected (``skip_or_fail`` at module level)."""
    _record(report)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """A test skipped in its setup (a fixture) or its call."""
    _record(report)
