"""The tests' OpenTelemetry SDK: one global tracer provider per test process, read back in memory.

The global provider can be set only once per process, so every test that reads spans shares this one.
It records only inside :func:`recording_spans`: the rest of the suite's agents run with a provider that
drops their spans, as it would with no SDK.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_lock = threading.Lock()
_exporter = InMemorySpanExporter()


class _Switched(SpanProcessor):
    """Hands ended spans to the in-memory exporter while switched on."""

    def __init__(self) -> None:
        self.on = False
        self._inner = SimpleSpanProcessor(_exporter)

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self._inner.on_end(span)


_switch: _Switched | None = None


@contextmanager
def recording_spans() -> Iterator[InMemorySpanExporter]:
    """Record finished spans (on the real SDK) into a cleared in-memory exporter for the duration."""
    global _switch
    with _lock:
        if _switch is None:
            provider = trace.get_tracer_provider()
            if not isinstance(provider, TracerProvider):
                provider = TracerProvider()
                trace.set_tracer_provider(provider)
            _switch = _Switched()
            provider.add_span_processor(_switch)
        _exporter.clear()
        _switch.on = True
    try:
        yield _exporter
    finally:
        _switch.on = False
        _exporter.clear()


def spans_named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    """The finished spans called ``name`` (prefix match when ``name`` ends with ``*``)."""
    spans = exporter.get_finished_spans()
    if name.endswith("*"):
        return [s for s in spans if s.name.startswith(name[:-1])]
    return [s for s in spans if s.name == name]
