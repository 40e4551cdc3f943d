"""The endpoint's EMF metrics on the real server: per request (Leg 1 WebSocket, ``/invocations`` binary and
SSE) and per interval (sessions, queued steps, errors by code); every line checked against the spec."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from kokoro_endpoint.serving.app import create_app
from kokoro_endpoint.serving.metrics import DEFAULT_NAMESPACE, EndpointMetrics, metrics_from_env
from kokoro_endpoint.serving.runner import RunningServer, running_server
from strands_voice_protocol.emf import EmfWriter
from strands_voice_protocol.errors import ConfigurationError
from support.emf import EmfLines, dimension_sets, metrics_of
from support.leg1_client import collect, replies
from websockets.asyncio.client import connect

pytestmark = pytest.mark.timeout(240)

TEXT = "Hello there."


@pytest.fixture(scope="module")
def metered(onnx_engine: Any) -> Iterator[tuple[RunningServer, EmfLines]]:
    lines = EmfLines()
    metrics = EndpointMetrics(EmfWriter(DEFAULT_NAMESPACE, {"Endpoint": "test"}, lines.write))
    app = create_app(engine=onnx_engine, metrics=metrics, metrics_interval_s=0.2)
    with running_server(app) as server:
        yield server, lines


def test_metrics_are_off_unless_asked() -> None:
    assert metrics_from_env({}) is None and metrics_from_env({"KOKORO_METRICS": "off"}) is None
    metrics = metrics_from_env({"KOKORO_METRICS": "emf", "KOKORO_METRICS_ENDPOINT": "ep-1"})
    assert metrics is not None and metrics.writer.dimensions == {"Endpoint": "ep-1"}
    assert metrics.writer.namespace == DEFAULT_NAMESPACE
    with pytest.raises(ConfigurationError):
        metrics_from_env({"KOKORO_METRICS": "prometheus"})


def test_bidi_request_metrics_and_error_codes(metered: tuple[RunningServer, EmfLines]) -> None:
    server, lines = metered

    async def session() -> list[Any]:
        async with connect(server.ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"type": "synthesize", "text": TEXT, "request_id": "m1"}))
            await ws.send(json.dumps({"type": "synthesize", "text": TEXT, "request_id": "m2", "speed": 9}))
            return replies(await collect(ws, 2))

    got = {r.request_id: r for r in asyncio.run(session())}
    assert got["m1"].kind == "synthesis_complete" and got["m2"].kind == "error"
    (line,) = lines.wait_for("FirstChunkLatency", Route="bidi")
    assert metrics_of(line) == {
        "FirstChunkLatency": "Milliseconds",
        "AudioSeconds": "Seconds",
        "RealTimeFactor": "None",
    }
    assert dimension_sets(line) == [["Endpoint"], ["Endpoint", "Route"]] and line["Endpoint"] == "test"
    complete = got["m1"].end
    assert complete is not None
    assert line["AudioSeconds"] == round(complete["total_duration_s"], 4)
    assert line["RealTimeFactor"] == round(complete["elapsed_s"] / complete["total_duration_s"], 4)
    assert 0 < line["FirstChunkLatency"] <= complete["elapsed_s"] * 1000
    code = got["m2"].end["code"]  # type: ignore[index]
    (by_code,) = lines.wait_for("Errors", ErrorCode=code)
    assert dimension_sets(by_code) == [["Endpoint", "ErrorCode"]] and by_code["Errors"] == 1


def test_http_request_metrics(metered: tuple[RunningServer, EmfLines]) -> None:
    server, lines = metered
    url = f"{server.base_url}/invocations"
    binary = httpx.post(url, json={"text": TEXT}, timeout=240)
    sse = httpx.post(url, json={"text": TEXT, "transport": "sse"}, timeout=240)
    bad = httpx.post(url, json={"text": ""}, timeout=240)
    assert binary.status_code == 200 and sse.status_code == 200 and bad.status_code == 400
    found = lines.wait_for("FirstChunkLatency", Route="invocations")
    while len(found) < 2:
        found = lines.wait_for("FirstChunkLatency", Route="invocations")
    audio = {line["AudioSeconds"] for line in found}
    assert round(len(binary.content) / 48_000, 4) in audio  # pcm16 body: bytes to seconds
    assert all(line["RealTimeFactor"] > 0 and line["FirstChunkLatency"] > 0 for line in found)
    code = bad.json()["code"]
    assert lines.wait_for("Errors", ErrorCode=code)


def test_interval_metrics(metered: tuple[RunningServer, EmfLines]) -> None:
    server, lines = metered
    interval = lines.wait_for("ActiveSessions")[-1]
    assert metrics_of(interval) == {
        "ActiveSessions": "Count",
        "SessionLimit": "Count",
        "QueuedSteps": "Count",
        "Requests": "Count",
        "Errors": "Count",
    }
    assert dimension_sets(interval) == [["Endpoint"]]
    assert interval["SessionLimit"] == 16 and interval["ActiveSessions"] >= 0 and interval["QueuedSteps"] >= 0

    async def hold_session() -> None:
        async with connect(server.ws_url) as ws:
            await ws.send(json.dumps({"type": "keepalive"}))
            lines.roots.clear()
            await asyncio.to_thread(lines.wait_for, "ActiveSessions", 60.0, ActiveSessions=1)

    asyncio.run(hold_session())


def test_bad_frames_are_counted_and_the_session_goes_on(metered: tuple[RunningServer, EmfLines]) -> None:
    server, lines = metered

    async def session() -> list[Any]:
        async with connect(server.ws_url, max_size=None) as ws:
            await ws.send("{not json")
            await ws.send(b"\xff\x00garbage")
            await ws.send("x" * (64 * 1024 + 1))  # over max_frame_bytes: not read by the metrics either
            await ws.send(json.dumps({"type": "synthesize", "text": TEXT, "request_id": "after"}))
            return replies(await collect(ws, 4))

    got = asyncio.run(session())
    assert [r.kind for r in got] == ["error", "error", "error", "synthesis_complete"]
    codes = {r.end["code"] for r in got if r.kind == "error"}  # type: ignore[index]
    for code in codes:
        assert lines.wait_for("Errors", ErrorCode=code)
