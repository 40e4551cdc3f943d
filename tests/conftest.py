"""Shared fixtures: offline settings, the --run-slow flag, and one real Kokoro endpoint per test session."""

from __future__ import annotations

import os

# Tests run offline: a hub miss would otherwise cost ~23 s of retries.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# The app's measured call cap is one call on a 2-core runner (agentcore_app.call.CALLS_PER_CORE); the
# functional tests open calls back to back and several at once, so they run under the old cap. The
# default itself is tested in tests/app/call/test_call_admission.py.
os.environ.setdefault("CALL_MAX_CALLS", "16")

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

# .ci/run's stage 1 lists the tests that skip (opt-in groups missing); stage 2 runs exactly those.
from skipped_tests import pytest_collectreport, pytest_runtest_logreport  # noqa: F401

if TYPE_CHECKING:
    from kokoro_endpoint.serving.runner import RunningServer

# Property tests: deterministic under CI (the same fixed examples every run, no wall-clock deadline, no
# example database carried between runs), exploratory on a developer's machine (new random examples each
# run, failures remembered in .hypothesis/). HYPOTHESIS_PROFILE picks one explicitly; .ci/run sets "ci".
# Inputs that once failed stay as @example(...) regressions next to their tests.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {settings.get_current_profile_name()}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", default=False, help="run the full soak and load tests"
    )


@pytest.fixture(scope="session")
def full_run(pytestconfig: pytest.Config) -> bool:
    """True when the full (not CI-shortened) soak and load tests were asked for with --run-slow."""
    return bool(pytestconfig.getoption("--run-slow"))


@pytest.fixture(scope="session")
def onnx_engine() -> Any:
    """The real Kokoro-82M int8 ONNX engine, loaded and warmed once per test session."""
    from kokoro_endpoint.engines.loader import load_engine

    engine = load_engine("onnx")
    engine.warm_up()
    return engine


@pytest.fixture(scope="session")
def endpoint_server(onnx_engine: Any) -> Iterator[RunningServer]:
    """The real TTS endpoint app (ONNX engine) served by uvicorn on 127.0.0.1:<free port>."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    with running_server(create_app(engine=onnx_engine)) as server:
        yield server
