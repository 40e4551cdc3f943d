"""OpenTelemetry spans of spoken answers: the voice in the agent's trace.

Strands agents emit OpenTelemetry spans through the global tracer provider (``invoke_agent …``,
``execute_event_loop_cycle``, ``chat``); the application chooses the exporters. The library does the same
with the OpenTelemetry API only: each spoken answer becomes one ``strands_voice.answer`` span, a child of
the agent's ``invoke_agent`` span (the span current at the first text delta when the agent's span is not
known), so it sits in the same trace as the model calls and tools that produced the text.

:class:`AnswerTrace` observes the answer's Leg 3 events as the response emits them and records the span
when ``audio_end`` comes, with the times it saw: the span starts when the response starts and ends at its
``audio_end``; each sentence is a ``strands_voice.sentence`` span event, each speech error a
``strands_voice.error`` span event. Every name is listed in ``docs/observability.md``. Without an SDK
configured, the API's no-op tracer records nothing.
"""

from __future__ import annotations

import base64
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.util.types import AttributeValue
from strands_voice_protocol.audio import SAMPLE_RATE
from strands_voice_protocol.audio.audible import FirstHeard
from strands_voice_protocol.events import AudioEndEvent, Event, InterruptedEvent

if TYPE_CHECKING:
    from strands_voice.speech._options import VoiceOptions

__all__ = [
    "ANSWER_SPAN",
    "ERROR_EVENT",
    "SENTENCE_EVENT",
    "TRACER_NAME",
    "AnswerTrace",
]

#: The instrumentation scope of the library's spans.
TRACER_NAME: Final = "strands_voice"
#: Every span, span event and attribute name is under the scope's name.
_PREFIX: Final = TRACER_NAME + "."
#: One span per spoken answer.
ANSWER_SPAN: Final = _PREFIX + "answer"
#: One span event per sentence spoken in full.
SENTENCE_EVENT: Final = _PREFIX + "sentence"
#: One span event per speech error.
ERROR_EVENT: Final = _PREFIX + "error"

logger = logging.getLogger(__name__)


@dataclass
class _Sentence:
    index: int
    first_byte_ms: float
    first_byte_ns: int
    characters: int = 0
    duration_s: float = 0.0
    complete_ns: int | None = None


class AnswerTrace:
    """The span of one spoken answer, recorded from its Leg 3 events (see the module docstring).

    :meth:`join` is called on the agent's thread (each text delta; only the first counts), :meth:`observe`
    on the response's loop, in event order.

    Args:
        options: The answer's mode, voice, speed and format.
    """

    def __init__(self, options: VoiceOptions) -> None:
        self._options = options
        self._start_ns = time.time_ns()
        self._parent: otel_context.Context | None = None
        self._sentences: dict[int, _Sentence] = {}
        self._errors: list[tuple[int, str, str]] = []  # (time, code, message)
        self._first_audio_ms: float | None = None
        self._first_heard: FirstHeard | None = FirstHeard(SAMPLE_RATE) if options.format == "pcm16" else None
        self._interrupted: InterruptedEvent | None = None
        self.recorded = False

    def join(self, agent: Any = None) -> None:
        """Take the parent: ``agent``'s own span when it has one, else the span current now.

        Args:
            agent: The Strands agent whose text this is (the ``agent`` of its callback events), if known.
        """
        if self._parent is not None:
            return
        span = getattr(agent, "trace_span", None)
        if isinstance(span, trace.Span) and span.get_span_context().is_valid:
            self._parent = trace.set_span_in_context(span)
        else:
            self._parent = otel_context.get_current()

    def observe(self, event: Event) -> None:
        """Note one of the answer's events; ``audio_end`` records the span. Never raises."""
        try:
            self._observe(event)
        except Exception:
            # Tracing must never break the speech.
            logger.exception("answer trace failed")

    def _observe(self, event: Event) -> None:
        now = time.time_ns()
        if event["type"] == "audio_chunk":
            sentence = event["sentence"]
            if sentence not in self._sentences:
                self._sentences[sentence] = _Sentence(sentence, event["t_ms"], now)
            if self._first_audio_ms is None:
                self._first_audio_ms = event["t_ms"]
            if self._first_heard is not None and self._first_heard.heard_at is None:
                self._first_heard.feed(event["t_ms"] / 1000.0, base64.b64decode(event["data"]))
        elif event["type"] == "sentence_complete":
            record = self._sentences.setdefault(
                event["sentence"], _Sentence(event["sentence"], event["t_ms"], now)
            )
            record.characters = len(event["text"])
            record.duration_s = event["duration_s"]
            record.complete_ns = now
        elif event["type"] == "error":
            self._errors.append((now, event["code"], event["message"]))
        elif event["type"] == "interrupted":
            self._interrupted = event
        elif event["type"] == "audio_end" and not self.recorded:
            self._record(event, now)

    def _record(self, end: AudioEndEvent, end_ns: int) -> None:
        """Make the span, its events and attributes, and end it at ``end_ns``."""
        self.recorded = True
        tracer = trace.get_tracer(TRACER_NAME)
        span = tracer.start_span(
            ANSWER_SPAN, context=self._parent, attributes=self._attributes(end), start_time=self._start_ns
        )
        for sentence in self._spoken():
            span.add_event(
                SENTENCE_EVENT,
                {
                    _PREFIX + "sentence.index": sentence.index,
                    _PREFIX + "sentence.characters": sentence.characters,
                    _PREFIX + "sentence.first_byte_ms": sentence.first_byte_ms,
                    _PREFIX + "sentence.duration_s": sentence.duration_s,
                },
                timestamp=sentence.complete_ns,
            )
        for at, code, message in self._errors:
            span.add_event(
                ERROR_EVENT, {_PREFIX + "error.code": code, _PREFIX + "error.message": message}, at
            )
        if self._errors:
            codes = ", ".join(code for _, code, _ in self._errors)
            span.set_status(trace.Status(trace.StatusCode.ERROR, f"speech failed: {codes}"))
        span.end(end_time=end_ns)

    def _spoken(self) -> list[_Sentence]:
        """The sentences heard in full (after a barge-in, those the ``interrupted`` event names)."""
        done = [s for s in self._sentences.values() if s.complete_ns is not None]
        if self._interrupted is not None:
            heard = set(self._interrupted["sentences_done"])
            done = [s for s in done if s.index in heard]
        return sorted(done, key=lambda s: s.index)

    def _attributes(self, end: AudioEndEvent) -> dict[str, AttributeValue]:
        options = self._options
        attributes: dict[str, AttributeValue] = {
            _PREFIX + "mode": options.mode,
            _PREFIX + "format": options.format,
            _PREFIX + "sentences": len(self._spoken()),
            _PREFIX + "audio_seconds": end["duration_s"],
            _PREFIX + "audio_chunks": end["chunks"],
            _PREFIX + "interrupted": self._interrupted is not None,
            _PREFIX + "error_codes": [code for _, code, _ in self._errors],
        }
        if options.voice is not None:
            attributes[_PREFIX + "voice"] = options.voice
        if options.speed is not None:
            attributes[_PREFIX + "speed"] = options.speed
        if self._first_audio_ms is not None:
            attributes[_PREFIX + "time_to_first_audio_ms"] = self._first_audio_ms
        heard_at = self._first_heard.heard_at if self._first_heard is not None else None
        if heard_at is not None:
            attributes[_PREFIX + "first_heard_ms"] = round(heard_at * 1000.0, 1)
        if self._interrupted is not None:
            attributes[_PREFIX + "heard_characters"] = len(self._interrupted["heard_text"])
            attributes[_PREFIX + "interrupted_ms"] = self._interrupted["t_ms"]
        return attributes
