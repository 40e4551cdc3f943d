"""Hearing the caller: voice activity detection, end of turn, speech recognition (the ``listen`` extra).

``Listener`` is the asyncio adapter both the cascade BidiModel (:mod:`strands_voice.cascade`) and the app's
spoken call use: ``await listener.feed(pcm16)``, ``async for event in listener.events()``
(:class:`SpeechStarted`, :class:`Transcript`, :class:`TurnEnded`, :class:`TurnTooLong`,
:class:`RecognitionFailed`),
``await listener.aclose()``. The heavy packages (onnxruntime, faster-whisper, the Transcribe SDK) load
only when an engine is made; without them a :class:`~strands_voice_protocol.errors.MissingDependencyError`
says ``pip install 'strands-voice[listen]'`` (here: ``uv sync --group listen``).
"""

from __future__ import annotations

from strands_voice.listen._detector import TurnDetector
from strands_voice.listen._events import (
    ListenEvent,
    RecognitionFailed,
    SpeechStarted,
    Transcript,
    TurnEnded,
    TurnTooLong,
)
from strands_voice.listen._listener import Listener
from strands_voice.listen._recognizer import RecognitionStream, Recognizer
from strands_voice.listen._settings import ListenSettings
from strands_voice.listen._transcribe import TranscribeRecognizer
from strands_voice.listen._vad import SileroVad, Vad
from strands_voice.listen._whisper import WhisperRecognizer, whisper_model_dir

__all__ = [
    "ListenEvent",
    "ListenSettings",
    "Listener",
    "RecognitionFailed",
    "RecognitionStream",
    "Recognizer",
    "SileroVad",
    "SpeechStarted",
    "TranscribeRecognizer",
    "Transcript",
    "TurnDetector",
    "TurnEnded",
    "TurnTooLong",
    "Vad",
    "WhisperRecognizer",
    "whisper_model_dir",
]
