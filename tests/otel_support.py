"""The tests' OpenTelemetry SDK: one global tracer provider per test process, read back in memory.

The global provider can be set once per process, so every test that reads spans shares this one and
clears the exporter first (:func:`span_exporter`).
"""

from __future__ import annotations

import threading

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_lock = threading.Lock()
_exporter: InMemorySpanExporter | None = None


def span_exporter() -> InMemorySpanExporter:
    """The process's in-memory exporter on the real SDK (installed on first use), cleared."""
    global _exporter
    with _lock:
        if _exporter is None:
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                provider = TracerProvider()
                trace.set_tracer_provider(provider)
            _exporter = InMemorySpanExporter()
            provider.add_span_processor(SimpleSpanProcessor(_exporter))
        _exporter.clear()
        return _exporter


def spans_named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    """The finished spans called ``name`` (prefix match when ``name`` ends with ``*``)."""
    spans = exporter.get_finished_spans()
    if name.endswith("*"):
        return [s for s in spans if s.name.startswith(name[:-1])]
    return [s for s in spans if s.name == name]
