"""strands-voice: low-latency voice for Strands agents.

The library's public names, re-exported from the modules that own them (each module's ``__all__``).
They load lazily (PEP 562), so ``import strands_voice.frames`` in the TTS endpoint does not pull in
Strands, boto3 or the SageMaker SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strands_voice.audio import (
        AUDIO_FORMATS,
        BYTES_PER_SECOND,
        MIME_TYPES,
        SAMPLE_RATE,
        STREAMING_WAV_SIZE,
        AudioEncoder,
        Mp3Encoder,
        OpusEncoder,
        Pcm16Encoder,
        WavEncoder,
        create_encoder,
        decode_audio,
        float32_to_pcm16,
        mp3_frame_size,
        pcm16_to_float32,
        pcm16_to_wav,
        wav_header,
        write_wav,
    )
    from strands_voice.chunker import (
        ABBREVIATIONS,
        IncrementalSentenceChunker,
        clean_for_speech,
        ends_with_abbreviation,
    )
    from strands_voice.connect import (
        BIDI_PATH,
        transport_from_url,
    )
    from strands_voice.errors import (
        AudioEncodingError,
        FrameDecodeError,
        MissingDependencyError,
        SageMakerStreamError,
        SSEDecodeError,
        StrandsVoiceError,
        TTSConnectionError,
        TTSError,
        TTSRequestError,
        TTSTimeoutError,
    )
    from strands_voice.event_queue import (
        EventQueue,
    )
    from strands_voice.events import (
        EVENT_TYPES,
        Event,
        EventBuilder,
    )
    from strands_voice.frames import (
        DEFAULT_CHANNELS,
        DEFAULT_FORMAT,
        DEFAULT_SAMPLE_RATE,
        ERROR_CODES,
        Cancel,
        ClientMessage,
        Close,
        ErrorCode,
        ErrorFrame,
        ServerMessage,
        SynthesisCancelled,
        SynthesisComplete,
        SynthesisStart,
        Synthesize,
        decode_client_message,
        decode_server_control,
        decode_server_frame,
        encode_client_message,
        encode_server_message,
        is_control_frame,
    )
    from strands_voice.handler import (
        DEFAULT_MAX_QUEUED_EVENTS,
        VOICE_OPTIONS_KEY,
        EventStream,
        VoiceCallbackHandler,
        ends_model_turn,
    )
    from strands_voice.heard import (
        DeliveryLog,
        heard_text,
    )
    from strands_voice.modes import (
        run_batch,
        run_bidi,
        run_voice,
    )
    from strands_voice.plugin import (
        VoicePlugin,
    )
    from strands_voice.response import (
        Response,
    )
    from strands_voice.sagemaker import (
        SageMakerTransport,
    )
    from strands_voice.scripted import (
        SCRIPTED_ANSWER,
        ScriptedModel,
        ScriptedModelConfig,
        split_tokens,
    )
    from strands_voice.session import (
        AudioChunk,
        RequestCancelled,
        RequestCompleted,
        RequestFailed,
        RequestStarted,
        SessionEvent,
        TTSSession,
    )
    from strands_voice.speaker import (
        DEFAULT_MAX_REQUEST_CHARS,
        MODES,
        Mode,
        Speaker,
        TransportFactory,
        VoiceOptions,
        split_for_requests,
    )
    from strands_voice.sse import (
        DEFAULT_MAX_EVENT_BYTES,
        SSEDecoder,
        SSEEvent,
        encode_sse,
        encode_sse_event,
    )
    from strands_voice.tasks import cancel_and_wait
    from strands_voice.transport import (
        Frame,
        FrameTransport,
    )
    from strands_voice.websocket import (
        WebSocketTransport,
    )

__version__ = "0.1.0"

# Public name -> the module that owns it.
_EXPORTS: dict[str, str] = {
    "ends_model_turn": "handler",
    "DEFAULT_MAX_QUEUED_EVENTS": "handler",
    "MODES": "speaker",
    "Response": "response",
    "heard_text": "heard",
    "DeliveryLog": "heard",
    "EventQueue": "event_queue",
    "ABBREVIATIONS": "chunker",
    "AUDIO_FORMATS": "audio",
    "AudioChunk": "session",
    "AudioEncoder": "audio",
    "AudioEncodingError": "errors",
    "BIDI_PATH": "connect",
    "BYTES_PER_SECOND": "audio",
    "Cancel": "frames",
    "ClientMessage": "frames",
    "Close": "frames",
    "DEFAULT_CHANNELS": "frames",
    "DEFAULT_FORMAT": "frames",
    "DEFAULT_MAX_EVENT_BYTES": "sse",
    "DEFAULT_MAX_REQUEST_CHARS": "speaker",
    "DEFAULT_SAMPLE_RATE": "frames",
    "ERROR_CODES": "frames",
    "EVENT_TYPES": "events",
    "ErrorCode": "frames",
    "ErrorFrame": "frames",
    "Event": "events",
    "EventBuilder": "events",
    "EventStream": "handler",
    "Frame": "transport",
    "FrameDecodeError": "errors",
    "FrameTransport": "transport",
    "IncrementalSentenceChunker": "chunker",
    "MIME_TYPES": "audio",
    "MissingDependencyError": "errors",
    "Mode": "speaker",
    "Mp3Encoder": "audio",
    "OpusEncoder": "audio",
    "Pcm16Encoder": "audio",
    "RequestCancelled": "session",
    "RequestCompleted": "session",
    "RequestFailed": "session",
    "RequestStarted": "session",
    "SAMPLE_RATE": "audio",
    "SCRIPTED_ANSWER": "scripted",
    "SSEDecodeError": "errors",
    "SSEDecoder": "sse",
    "SSEEvent": "sse",
    "STREAMING_WAV_SIZE": "audio",
    "SageMakerStreamError": "errors",
    "SageMakerTransport": "sagemaker",
    "ScriptedModel": "scripted",
    "ScriptedModelConfig": "scripted",
    "ServerMessage": "frames",
    "SessionEvent": "session",
    "Speaker": "speaker",
    "StrandsVoiceError": "errors",
    "SynthesisCancelled": "frames",
    "SynthesisComplete": "frames",
    "SynthesisStart": "frames",
    "Synthesize": "frames",
    "TTSConnectionError": "errors",
    "TTSError": "errors",
    "TTSRequestError": "errors",
    "TTSSession": "session",
    "TTSTimeoutError": "errors",
    "TransportFactory": "speaker",
    "VOICE_OPTIONS_KEY": "handler",
    "VoiceCallbackHandler": "handler",
    "VoiceOptions": "speaker",
    "VoicePlugin": "plugin",
    "WavEncoder": "audio",
    "WebSocketTransport": "websocket",
    "cancel_and_wait": "tasks",
    "clean_for_speech": "chunker",
    "ends_with_abbreviation": "chunker",
    "create_encoder": "audio",
    "decode_audio": "audio",
    "decode_client_message": "frames",
    "decode_server_control": "frames",
    "decode_server_frame": "frames",
    "encode_client_message": "frames",
    "encode_server_message": "frames",
    "encode_sse": "sse",
    "encode_sse_event": "sse",
    "float32_to_pcm16": "audio",
    "is_control_frame": "frames",
    "mp3_frame_size": "audio",
    "pcm16_to_float32": "audio",
    "pcm16_to_wav": "audio",
    "run_batch": "modes",
    "run_bidi": "modes",
    "run_voice": "modes",
    "split_for_requests": "speaker",
    "split_tokens": "scripted",
    "transport_from_url": "connect",
    "wav_header": "audio",
    "write_wav": "audio",
}

__all__ = [
    "ABBREVIATIONS",
    "AUDIO_FORMATS",
    "BIDI_PATH",
    "BYTES_PER_SECOND",
    "DEFAULT_CHANNELS",
    "DEFAULT_FORMAT",
    "DEFAULT_MAX_EVENT_BYTES",
    "DEFAULT_MAX_QUEUED_EVENTS",
    "DEFAULT_MAX_REQUEST_CHARS",
    "DEFAULT_SAMPLE_RATE",
    "ERROR_CODES",
    "EVENT_TYPES",
    "MIME_TYPES",
    "MODES",
    "SAMPLE_RATE",
    "SCRIPTED_ANSWER",
    "STREAMING_WAV_SIZE",
    "VOICE_OPTIONS_KEY",
    "AudioChunk",
    "AudioEncoder",
    "AudioEncodingError",
    "Cancel",
    "ClientMessage",
    "Close",
    "DeliveryLog",
    "ErrorCode",
    "ErrorFrame",
    "Event",
    "EventBuilder",
    "EventQueue",
    "EventStream",
    "Frame",
    "FrameDecodeError",
    "FrameTransport",
    "IncrementalSentenceChunker",
    "MissingDependencyError",
    "Mode",
    "Mp3Encoder",
    "OpusEncoder",
    "Pcm16Encoder",
    "RequestCancelled",
    "RequestCompleted",
    "RequestFailed",
    "RequestStarted",
    "Response",
    "SSEDecodeError",
    "SSEDecoder",
    "SSEEvent",
    "SageMakerStreamError",
    "SageMakerTransport",
    "ScriptedModel",
    "ScriptedModelConfig",
    "ServerMessage",
    "SessionEvent",
    "Speaker",
    "StrandsVoiceError",
    "SynthesisCancelled",
    "SynthesisComplete",
    "SynthesisStart",
    "Synthesize",
    "TTSConnectionError",
    "TTSError",
    "TTSRequestError",
    "TTSSession",
    "TTSTimeoutError",
    "TransportFactory",
    "VoiceCallbackHandler",
    "VoiceOptions",
    "VoicePlugin",
    "WavEncoder",
    "WebSocketTransport",
    "cancel_and_wait",
    "clean_for_speech",
    "create_encoder",
    "decode_audio",
    "decode_client_message",
    "decode_server_control",
    "decode_server_frame",
    "encode_client_message",
    "encode_server_message",
    "encode_sse",
    "encode_sse_event",
    "ends_model_turn",
    "ends_with_abbreviation",
    "float32_to_pcm16",
    "heard_text",
    "is_control_frame",
    "mp3_frame_size",
    "pcm16_to_float32",
    "pcm16_to_wav",
    "run_batch",
    "run_bidi",
    "run_voice",
    "split_for_requests",
    "split_tokens",
    "transport_from_url",
    "wav_header",
    "write_wav",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"strands_voice.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
