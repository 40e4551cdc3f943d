"""The spoken answer in the agent's trace: ``strands_voice.answer`` spans under a REAL Strands agent
invocation, read back through the OpenTelemetry SDK's in-memory exporter, against the REAL endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from strands import Agent
from support.otel import recording_spans, spans_named

from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech._options import VoiceOptions
from strands_voice.speech._tracing import ANSWER_SPAN, ERROR_EVENT, SENTENCE_EVENT

pytestmark = pytest.mark.timeout(240)

#: The shared CPU can synthesize several times slower than real time while other suites run.
SILENCE_S = 120.0

P = "strands_voice."


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    with recording_spans() as exporter:
        yield exporter


def agent_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans_named(exporter, "invoke_agent*")
    return span


def answer_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = spans_named(exporter, ANSWER_SPAN)
    return span


def check_under_agent(answer: ReadableSpan, agent: ReadableSpan) -> None:
    """Same trace, parent the agent's ``invoke_agent`` span, inside its start."""
    assert answer.parent is not None and agent.context is not None and answer.context is not None
    assert answer.context.trace_id == agent.context.trace_id
    assert answer.parent.span_id == agent.context.span_id
    assert answer.start_time is not None and agent.start_time is not None
    assert answer.end_time is not None and answer.start_time <= answer.end_time


def sentence_events(span: ReadableSpan) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == SENTENCE_EVENT]


async def run_stream(
    voice: VoiceCallbackHandler, agent: Agent, interrupt_at_first_audio: bool = False
) -> list[Any]:
    events: list[Any] = []
    async with asyncio.timeout(200):
        async for event in voice.stream(agent, "Tell me about the plan."):
            events.append(event)
            if interrupt_at_first_audio and event["type"] == "audio_chunk":
                voice.interrupt()
    return events


def test_bidi_answer_span_under_agent_call(
    endpoint_server: Any, short_text: str, exporter: InMemorySpanExporter
) -> None:
    spoken: list[Any] = []
    voice = VoiceCallbackHandler(
        endpoint_server.ws_url,
        options=VoiceOptions(voice="jm_kumo"),
        on_event=spoken.append,
        silence_timeout=SILENCE_S,
    )
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.1, total_s=1.0), callback_handler=voice
    )
    agent("Tell me about the plan.")
    assert voice.wait(timeout=200)
    voice.close()
    answer = answer_span(exporter)
    check_under_agent(answer, agent_span(exporter))
    attributes = dict(answer.attributes or {})
    first_chunk = next(e for e in spoken if e["type"] == "audio_chunk")
    done = [e for e in spoken if e["type"] == "sentence_complete"]
    end = spoken[-1]
    assert attributes[P + "mode"] == "bidi" and attributes[P + "voice"] == "jm_kumo"
    assert attributes[P + "format"] == "pcm16"
    assert attributes[P + "time_to_first_audio_ms"] == first_chunk["t_ms"]
    # The first sound plays no earlier than the first byte (a segment starts with near-silence).
    assert attributes[P + "first_heard_ms"] >= first_chunk["t_ms"]
    assert attributes[P + "sentences"] == len(done) == 3
    assert attributes[P + "audio_seconds"] == end["duration_s"] > 0
    assert attributes[P + "audio_chunks"] == end["chunks"]
    assert attributes[P + "interrupted"] is False
    assert tuple(attributes[P + "error_codes"]) == ()  # type: ignore[arg-type]
    assert answer.status.status_code is StatusCode.UNSET
    sentences = sentence_events(answer)
    assert [s[P + "sentence.index"] for s in sentences] == [0, 1, 2]
    assert [s[P + "sentence.characters"] for s in sentences] == [len(e["text"]) for e in done]
    assert [s[P + "sentence.duration_s"] for s in sentences] == [e["duration_s"] for e in done]
    first_bytes = [s[P + "sentence.first_byte_ms"] for s in sentences]
    assert first_bytes[0] == first_chunk["t_ms"] and first_bytes == sorted(first_bytes)


def test_batch_answer_span_under_stream(endpoint_server: Any, exporter: InMemorySpanExporter) -> None:
    text = "Hello there. The plan costs ten dollars."
    voice = VoiceCallbackHandler(
        endpoint_server.ws_url, options=VoiceOptions(mode="batch", format="wav"), silence_timeout=SILENCE_S
    )
    agent = Agent(model=ScriptedModel(text=text, first_sentence_s=0.05, total_s=0.2), callback_handler=voice)
    events = asyncio.run(run_stream(voice, agent))
    voice.close()
    answer = answer_span(exporter)
    check_under_agent(answer, agent_span(exporter))
    attributes = dict(answer.attributes or {})
    agent_end = events[-1]
    assert agent_end["type"] == "agent_end"
    assert attributes[P + "mode"] == "batch" and attributes[P + "format"] == "wav"
    assert P + "voice" not in attributes  # the endpoint's default voice
    assert attributes[P + "time_to_first_audio_ms"] == agent_end["ttfa_ms"]
    assert P + "first_heard_ms" not in attributes  # measured on pcm16 answers only
    assert attributes[P + "sentences"] == len([e for e in events if e["type"] == "sentence_complete"]) >= 1
    assert attributes[P + "interrupted"] is False


def test_interrupted_answer_span(
    endpoint_server: Any, short_text: str, exporter: InMemorySpanExporter
) -> None:
    voice = VoiceCallbackHandler(endpoint_server.ws_url, silence_timeout=SILENCE_S)
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.1, total_s=0.5), callback_handler=voice
    )
    events = asyncio.run(run_stream(voice, agent, interrupt_at_first_audio=True))
    voice.close()
    (interrupted,) = [e for e in events if e["type"] == "interrupted"]
    (end,) = [e for e in events if e["type"] == "audio_end"]
    answer = answer_span(exporter)
    check_under_agent(answer, agent_span(exporter))
    attributes = dict(answer.attributes or {})
    assert attributes[P + "interrupted"] is True
    assert attributes[P + "interrupted_ms"] == interrupted["t_ms"]
    assert attributes[P + "heard_characters"] == len(interrupted["heard_text"])
    assert attributes[P + "sentences"] == len(interrupted["sentences_done"])
    assert [s[P + "sentence.index"] for s in sentence_events(answer)] == interrupted["sentences_done"]
    assert attributes[P + "audio_seconds"] == end["duration_s"]


def test_speech_error_span(short_text: str, exporter: InMemorySpanExporter) -> None:
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/x", connect_timeout=2)
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.05, total_s=0.2), callback_handler=voice
    )
    agent("Hi.")
    assert voice.wait(timeout=30)
    voice.close()
    answer = answer_span(exporter)
    check_under_agent(answer, agent_span(exporter))
    attributes = dict(answer.attributes or {})
    codes = tuple(attributes[P + "error_codes"])  # type: ignore[arg-type]
    assert codes in {("connection_failed",), ("connect_timeout",)}
    assert P + "time_to_first_audio_ms" not in attributes and attributes[P + "audio_seconds"] == 0.0
    assert answer.status.status_code is StatusCode.ERROR
    (error,) = [e for e in answer.events if e.name == ERROR_EVENT]
    assert (error.attributes or {})[P + "error.code"] == codes[0]


def test_plugin_answer_span_under_agent(short_text: str, exporter: InMemorySpanExporter) -> None:
    """The plugin opens the answer before the agent's span exists; the span still lands under it."""
    from strands_voice.agent._plugin import VoicePlugin

    plugin = VoicePlugin("ws://127.0.0.1:9/x", connect_timeout=2)
    agent = Agent(model=ScriptedModel(text=short_text, first_sentence_s=0.05, total_s=0.2), plugins=[plugin])
    agent("Hi.")
    assert plugin.handler.wait(timeout=30)
    plugin.handler.close()
    check_under_agent(answer_span(exporter), agent_span(exporter))
