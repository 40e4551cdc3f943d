"""The app's per-answer figures as CloudWatch EMF lines on stdout (``AGENT_METRICS=emf``; off by default).

The AgentCore Runtime sends the app's stdout to CloudWatch Logs, where EMF lines become metrics. One line
per answer, beside the answer's trace (its ``TraceId`` is a property of the line): ``Answers``,
``TimeToFirstAudio`` (from the invocation to the first ``audio_chunk`` handed to the caller's stream),
``AudioSeconds``, ``Interrupted`` (0 or 1) and ``SpeechErrors`` (``error`` events), under ``[Service]``
and ``[Service, Mode]``; and one ``Errors`` line per error code under ``[Service, ErrorCode]``. A spoken
call (``/ws``) adds one line per turn: ``Turns``, ``VoiceToVoice`` (end of the caller's speech to the first
answer audio sent), ``RecognitionTime`` and ``BargeIns``, under ``[Service]`` and ``[Service, Input]``.
Every name is listed in ``docs/observability.md``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections import Counter
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Final

from opentelemetry import trace
from strands_voice_protocol.emf import AGENT_NAMESPACE, EmfWriter, Metric, stdout_writer, writer_from_env
from strands_voice_protocol.events import Event

__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_SERVICE", "AnswerMetrics", "measured", "metrics_from_env"]

logger = logging.getLogger(__name__)

#: The CloudWatch namespace of the app's metrics.
DEFAULT_NAMESPACE: Final = AGENT_NAMESPACE
#: The ``Service`` dimension's value when ``AGENT_METRICS_SERVICE`` is not set.
DEFAULT_SERVICE: Final = "voice-agent"


class AnswerMetrics:
    """Writes one answer's figures.

    Args:
        writer: Where the lines go (its fixed dimension: ``Service``).
    """

    def __init__(self, writer: EmfWriter) -> None:
        self.writer = writer

    def answer(
        self,
        *,
        mode: str,
        first_audio_s: float | None,
        audio_s: float,
        interrupted: bool,
        error_codes: Counter[str],
        trace_id: str | None,
    ) -> None:
        """Write the answer's line, then one line per error code."""
        metrics = [
            Metric("Answers", "Count", 1),
            Metric("AudioSeconds", "Seconds", round(audio_s, 4)),
            Metric("Interrupted", "Count", int(interrupted)),
            Metric("SpeechErrors", "Count", sum(error_codes.values())),
        ]
        if first_audio_s is not None:
            metrics.append(Metric("TimeToFirstAudio", "Milliseconds", round(first_audio_s * 1000.0, 1)))
        service = list(self.writer.dimensions)
        self.writer.emit(
            metrics,
            extra_dimensions={"Mode": mode},
            dimension_sets=[service, [*service, "Mode"]],
            properties={"TraceId": trace_id} if trace_id else None,
        )
        self.writer.emit_error_counts(error_codes)

    def call_turn(
        self,
        *,
        spoken: bool,
        voice_to_voice_s: float | None,
        recognition_s: float | None,
        barged_in: bool,
    ) -> None:
        """Write one line for a turn of a spoken call (``/ws``), under ``[Service]`` and ``[Service, Input]``.

        Args:
            spoken: The caller said it (``Input`` ``spoken``), else typed it (``typed``).
            voice_to_voice_s: From the end of the caller's speech to the first answer audio sent.
            recognition_s: From the end of the turn to the final text.
            barged_in: The answer was interrupted (the caller spoke over it, or pressed Stop).
        """
        metrics = [Metric("Turns", "Count", 1), Metric("BargeIns", "Count", int(barged_in))]
        if voice_to_voice_s is not None:
            metrics.append(Metric("VoiceToVoice", "Milliseconds", round(voice_to_voice_s * 1000.0, 1)))
        if recognition_s is not None:
            metrics.append(Metric("RecognitionTime", "Milliseconds", round(recognition_s * 1000.0, 1)))
        service = list(self.writer.dimensions)
        self.writer.emit(
            metrics,
            extra_dimensions={"Input": "spoken" if spoken else "typed"},
            dimension_sets=[service, [*service, "Input"]],
            properties={"TraceId": trace_id} if (trace_id := _trace_id()) else None,
        )


def metrics_from_env(
    environ: Mapping[str, str] | None = None, write: Callable[[str], None] = stdout_writer
) -> AnswerMetrics | None:
    """The metrics ``AGENT_METRICS`` asks for: ``emf`` (lines on stdout) or unset/``off`` (None).

    ``AGENT_METRICS_NAMESPACE`` and ``AGENT_METRICS_SERVICE`` (the ``Service`` dimension) override the
    defaults.

    Raises:
        ConfigurationError: ``AGENT_METRICS`` names something else.
    """
    env = os.environ if environ is None else environ
    writer = writer_from_env(env, "AGENT", ("Service", DEFAULT_SERVICE), DEFAULT_NAMESPACE, write)
    return None if writer is None else AnswerMetrics(writer)


def _trace_id() -> str | None:
    context = trace.get_current_span().get_span_context()
    return trace.format_trace_id(context.trace_id) if context.is_valid else None


async def measured(
    answer: AsyncGenerator[Event, None], metrics: AnswerMetrics
) -> AsyncGenerator[Event, None]:
    """Pass ``answer``'s events on unchanged, timing them as the caller's stream takes them.

    The figures are written when the answer ends, however it ends (a caller that left counts as
    interrupted). Closing this generator closes ``answer``.
    """
    async with contextlib.aclosing(answer):
        started = time.monotonic()
        mode = "unknown"
        first_audio: float | None = None
        audio_s = 0.0
        interrupted = ended = False
        errors: Counter[str] = Counter()
        trace_id = _trace_id()
        try:
            async for event in answer:
                if event["type"] == "agent_start":
                    mode = event["mode"]
                elif event["type"] == "audio_chunk" and first_audio is None:
                    first_audio = time.monotonic() - started
                elif event["type"] == "audio_end":
                    audio_s = event["duration_s"]
                elif event["type"] == "interrupted":
                    interrupted = True
                elif event["type"] == "error":
                    errors[event["code"]] += 1
                elif event["type"] == "agent_end":
                    ended = True
                yield event
        finally:
            try:
                metrics.answer(
                    mode=mode,
                    first_audio_s=first_audio,
                    audio_s=audio_s,
                    interrupted=interrupted or not ended,
                    error_codes=errors,
                    trace_id=trace_id or _trace_id(),
                )
            except Exception:
                logger.exception("answer metrics failed")  # figures must never break an answer
