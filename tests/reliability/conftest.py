"""Reliability fixtures: an instrumented real endpoint with room for the load test, and a figures report."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from support.reliability import LOAD_SESSIONS, CountingEngine

# Figures measured by the load, soak and fault tests; printed at the end of the run and written to
# $RELIABILITY_FIGURES_JSON when set (docs/reliability.md quotes a real run).
FIGURES: dict[str, Any] = {}


@dataclass
class ReliabilityEndpoint:
    """The real ONNX endpoint on 127.0.0.1, with its shared state and the instrumented engine."""

    server: Any
    app: Any
    engine: CountingEngine

    @property
    def state(self) -> Any:
        return self.app.state.endpoint

    @property
    def sessions(self) -> int:
        """WebSocket sessions plus /invocations streams the endpoint holds right now."""
        return int(self.state.capacity.in_use)


@pytest.fixture(scope="session")
def reliability_endpoint(onnx_engine: Any) -> Iterator[ReliabilityEndpoint]:
    """The real endpoint app (shared ONNX engine, counted) with ``max_sessions`` big enough for the load
    test, served like the CLI serves it (``ws_max_size`` 4x the frame limit)."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    # Admission off: the load test holds more sessions at once than two cores feed in real time, on
    # purpose (what admission refuses is tests/endpoint/scheduling/test_admission.py).
    settings = Settings(max_sessions=LOAD_SESSIONS + 8, admission_max_load=None)
    engine = CountingEngine(onnx_engine)
    app = create_app(engine=engine, settings=settings)  # type: ignore[arg-type]
    with running_server(app, ws_max_size=4 * settings.max_frame_bytes) as server:
        yield ReliabilityEndpoint(server=server, app=app, engine=engine)


@pytest.fixture
def figures() -> dict[str, Any]:
    """Where tests record the figures they measured (name -> value)."""
    return FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"{name}: {value}")
    target = os.environ.get("RELIABILITY_FIGURES_JSON")
    if target:
        with open(target, "w", encoding="utf-8") as out:
            json.dump(FIGURES, out, indent=2, sort_keys=True)
