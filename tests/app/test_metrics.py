"""The app's per-answer EMF figures, on the real app over HTTP next to the real TTS endpoint."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import httpx
import pytest
from agentcore_app.metrics import DEFAULT_NAMESPACE, AnswerMetrics, measured, metrics_from_env
from agentcore_app.scripted import ScriptedModel
from strands_voice_protocol.emf import EmfWriter
from strands_voice_protocol.events import Event, EventBuilder
from support.emf import EmfLines, dimension_sets, metrics_of
from support.otel import recording_spans

pytestmark = pytest.mark.timeout(240)

#: The shared machine can be slow to synthesize; don't let the app give up on the endpoint.
SILENCE_S = 120.0

LONG_ANSWER = " ".join(
    f"Sentence number {n} of a long answer that keeps the speaker busy." for n in range(12)
)


def _metered_app(tts_url: str, text: str) -> tuple[Any, EmfLines]:
    from agentcore_app.app import create_app

    lines = EmfLines()
    metrics = AnswerMetrics(EmfWriter(DEFAULT_NAMESPACE, {"Service": "test"}, lines.write))
    model = ScriptedModel(text=text, first_sentence_s=0.15, total_s=0.5)
    app = create_app(tts_url=tts_url, model=model, silence_timeout=SILENCE_S, metrics=metrics)
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)  # one JSON line per request
    return app, lines


@pytest.fixture(scope="module")
def metered_app(endpoint_server: Any) -> Iterator[tuple[str, EmfLines]]:
    from kokoro_endpoint.serving.runner import running_server

    app, lines = _metered_app(endpoint_server.ws_url, "Hello there. This answer is short.")
    with running_server(app) as server:
        yield server.base_url, lines


def test_metrics_are_off_unless_asked() -> None:
    assert metrics_from_env({}) is None
    metrics = metrics_from_env({"AGENT_METRICS": "emf", "AGENT_METRICS_SERVICE": "support-bot"})
    assert metrics is not None and metrics.writer.dimensions == {"Service": "support-bot"}


def test_answer_figures(metered_app: tuple[str, EmfLines], invoke: Any) -> None:
    url, lines = metered_app
    lines.roots.clear()
    status, events = invoke(url, {"prompt": "Hi", "mode": "batch"})
    assert status == 200 and events[-1]["type"] == "agent_end"
    (line,) = lines.wait_for("Answers")
    assert metrics_of(line) == {
        "Answers": "Count",
        "AudioSeconds": "Seconds",
        "Interrupted": "Count",
        "SpeechErrors": "Count",
        "TimeToFirstAudio": "Milliseconds",
    }
    assert dimension_sets(line) == [["Service"], ["Service", "Mode"]]
    assert (line["Service"], line["Mode"], line["Answers"]) == ("test", "batch", 1)
    (audio_end,) = [e for e in events if e["type"] == "audio_end"]
    assert line["AudioSeconds"] == round(audio_end["duration_s"], 4) > 0
    # At the caller: no earlier than the answer's own clock saw its first audio.
    assert line["TimeToFirstAudio"] >= events[-1]["ttfa_ms"] - 1
    assert (line["Interrupted"], line["SpeechErrors"]) == (0, 0)


def test_caller_leaving_counts_as_interrupted(endpoint_server: Any) -> None:
    from kokoro_endpoint.serving.runner import running_server

    app, lines = _metered_app(endpoint_server.ws_url, LONG_ANSWER)
    with running_server(app) as server:
        with httpx.Client(timeout=httpx.Timeout(10.0, read=120.0)) as client:
            with client.stream("POST", f"{server.base_url}/invocations", json={"prompt": "Hi"}) as response:
                for data in response.iter_raw():
                    if b'"audio_chunk"' in data:
                        break  # hang up mid-answer
        (line,) = lines.wait_for("Answers")
    assert line["Interrupted"] == 1 and line["TimeToFirstAudio"] > 0


def test_speech_error_figures(invoke: Any) -> None:
    from kokoro_endpoint.serving.runner import running_server

    app, lines = _metered_app("ws://127.0.0.1:9/x", "Hello there. This answer is short.")
    with running_server(app) as server:
        status, events = invoke(server.base_url, {"prompt": "Hi"})
        (line,) = lines.wait_for("Answers")
        (by_code,) = lines.wait_for("Errors")
    codes = [e["code"] for e in events if e["type"] == "error"]
    assert status == 200 and len(codes) == 1
    assert line["SpeechErrors"] == 1 and "TimeToFirstAudio" not in line
    assert by_code["ErrorCode"] == codes[0] and by_code["Errors"] == 1
    assert dimension_sets(by_code) == [["Service", "ErrorCode"]]


def test_line_names_the_current_trace() -> None:
    """Beside the trace: the line carries the trace id of the span the answer runs under."""
    lines = EmfLines()
    metrics = AnswerMetrics(EmfWriter(DEFAULT_NAMESPACE, {"Service": "test"}, lines.write))
    builder = EventBuilder()

    async def answer() -> AsyncGenerator[Event, None]:
        yield builder.agent_start(mode="bidi", request_id="r")
        yield builder.audio_end(chunks=0, duration_s=0.0)
        yield builder.agent_end(ttfa_ms=None, text_ms=None, audio_ms=None)

    async def main() -> None:
        from opentelemetry import trace

        with trace.get_tracer("test").start_as_current_span("invocation"):
            async for _ in measured(answer(), metrics):
                pass

    with recording_spans() as exporter:
        asyncio.run(main())
        (span,) = exporter.get_finished_spans()
    (line,) = lines.roots
    assert line["TraceId"] == f"{span.context.trace_id:032x}"
    assert line["Interrupted"] == 0 and "TimeToFirstAudio" not in line
