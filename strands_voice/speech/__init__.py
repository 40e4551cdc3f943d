"""The speaking pipeline: an answer's text in, its Leg 3 speech events out, over one TTS session.

- :class:`VoiceOptions` is how an answer is spoken (voice, speed, format, ``bidi``/``batch`` mode, ...);
  :data:`VOICE_OPTIONS_KEY` carries one for a single request in an agent's ``invocation_state``.
- :class:`Response` is one answer: text fed as it is written, cut into sentences, spoken through
  ``_synthesis`` (one TTS session turned into audio events); ``_heard`` keeps what the caller heard
  (played at real-time speed); ``_event_stream`` and ``_event_queue`` carry the events out.
- :func:`within_lead` paces an answer's audio to the caller's playback (the cascade and the app's call).
- :class:`AnswerTrace` records each spoken answer as a ``strands_voice.answer`` OpenTelemetry span.
"""

from __future__ import annotations

from strands_voice.speech._event_queue import EventQueue
from strands_voice.speech._event_stream import EventHub, EventStream
from strands_voice.speech._options import (
    MODES,
    VOICE_OPTIONS_KEY,
    Chunker,
    Mode,
    ResponseSettings,
    TransportFactory,
    VoiceOptions,
    request_options,
)
from strands_voice.speech._pacing import Sleep, Unplayed, within_lead
from strands_voice.speech._response import Response
from strands_voice.speech._synthesis import CANCEL_TIMEOUT
from strands_voice.speech._tracing import ANSWER_SPAN, ERROR_EVENT, SENTENCE_EVENT, TRACER_NAME, AnswerTrace

__all__ = [
    "ANSWER_SPAN",
    "CANCEL_TIMEOUT",
    "ERROR_EVENT",
    "MODES",
    "SENTENCE_EVENT",
    "TRACER_NAME",
    "VOICE_OPTIONS_KEY",
    "AnswerTrace",
    "Chunker",
    "EventHub",
    "EventQueue",
    "EventStream",
    "Mode",
    "Response",
    "ResponseSettings",
    "Sleep",
    "TransportFactory",
    "Unplayed",
    "VoiceOptions",
    "request_options",
    "within_lead",
]
