"""strands-voice: low-latency voice for Strands agents.

The public API, on one screen. Add :class:`VoiceCallbackHandler` (or :class:`VoicePlugin`) to an agent
and it speaks each sentence over one persistent TTS session while the model is still writing the next.
Everything else stays importable from the module that owns it (for example
``strands_voice.session.RequestCompleted`` or ``strands_voice_protocol.frames.Synthesize``).
"""

from __future__ import annotations

from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.errors import (
    ConfigurationError,
    MissingDependencyError,
    StrandsVoiceError,
    TextEncodingError,
    TTSConnectionError,
    TTSError,
    TTSRequestError,
    TTSTimeoutError,
)
from strands_voice_protocol.events import EVENT_TYPES, Event

from strands_voice import _moved
from strands_voice.agent import NOTHING_HEARD, VoiceCallbackHandler, VoicePlugin, run_voice
from strands_voice.devices import Speakers
from strands_voice.session import RetryPolicy, TTSSession
from strands_voice.speech import VOICE_OPTIONS_KEY, Mode, VoiceOptions
from strands_voice.transports import (
    FrameTransport,
    SageMakerTransport,
    WebSocketTransport,
    transport_from_url,
)

_moved.install()

__all__ = [  # noqa: RUF022 (grouped by what a reader looks for, not sorted)
    # Voice for an agent
    "VoiceCallbackHandler",
    "VoicePlugin",
    "VoiceOptions",
    "VOICE_OPTIONS_KEY",
    "Mode",
    "run_voice",
    "Speakers",
    "NOTHING_HEARD",
    # The TTS session and its transports
    "TTSSession",
    "RetryPolicy",
    "FrameTransport",
    "WebSocketTransport",
    "SageMakerTransport",
    "transport_from_url",
    # Text in, events out
    "IncrementalSentenceChunker",
    "Event",
    "EVENT_TYPES",
    # Errors (one root: StrandsVoiceError)
    "StrandsVoiceError",
    "ConfigurationError",
    "MissingDependencyError",
    "TextEncodingError",
    "TTSError",
    "TTSConnectionError",
    "TTSRequestError",
    "TTSTimeoutError",
]
