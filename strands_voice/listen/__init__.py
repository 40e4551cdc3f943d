"""Hearing the caller: voice activity, the end of a turn, speech recognition (the ``listen`` extra).

``Listener`` is the asyncio adapter both the cascade BidiModel (:mod:`strands_voice.cascade`) and the app's
spoken call use: ``await listener.feed(pcm16)``, ``async for event in listener.events()`` (the events of
``_events``: :class:`SpeechOnset`, :class:`SpeechStarted`, :class:`CallerPaused`, :class:`Transcript`,
:class:`TurnEnded`, ...), ``await listener.aclose()``. Inside: the sans-I/O :class:`TurnDetector`
(``_detector``), the VAD (``_vad``), the recognizers (``_recognizer``, ``_whisper``, ``_transcribe``), the
turn-end model (``_turn_model``: Smart Turn v3.2) and the verdict that reads it with the words
(``_end_of_turn``), and the word lists of each language (``_words``: :func:`turn_words`, read by the
end-of-turn verdict here and by the rules for words over an answer in :mod:`strands_voice.turns`).

The heavy packages (onnxruntime, faster-whisper, the Transcribe SDK) load only when an engine is made;
without them a :class:`~strands_voice_protocol.errors.MissingDependencyError` says
``pip install 'strands-voice[listen]'`` (here: ``uv sync --group listen``).
"""

from __future__ import annotations

from strands_voice.listen._detector import JudgeTurn, TurnDetector
from strands_voice.listen._end_of_turn import THRESHOLDS, Thresholds, Verdict, judge_turn
from strands_voice.listen._events import (
    CallerPaused,
    CallerResumed,
    EndedBy,
    EndOfTurn,
    ListenEvent,
    OnsetDropped,
    RecognitionFailed,
    SpeechOnset,
    SpeechStarted,
    Transcript,
    TurnEnded,
    TurnTooLong,
)
from strands_voice.listen._listener import DEFAULT, DefaultTurnModel, Listener
from strands_voice.listen._pitch import final_fall, pitch_track
from strands_voice.listen._recognizer import RecognitionStream, Recognized, Recognizer
from strands_voice.listen._settings import EndOfTurnMode, ListenSettings, hearing_language_of
from strands_voice.listen._transcribe import TranscribeRecognizer
from strands_voice.listen._turn_model import SmartTurn, TurnModel, default_turn_model
from strands_voice.listen._vad import SileroVad, Vad
from strands_voice.listen._whisper import WhisperRecognizer, whisper_model_dir
from strands_voice.listen._words import (
    TurnWords,
    asks,
    backchannel_prompt,
    dictating,
    strands,
    turn_words,
    unfinished,
    words_of,
)

__all__ = [
    "DEFAULT",
    "THRESHOLDS",
    "CallerPaused",
    "CallerResumed",
    "DefaultTurnModel",
    "EndOfTurn",
    "EndOfTurnMode",
    "EndedBy",
    "JudgeTurn",
    "ListenEvent",
    "ListenSettings",
    "Listener",
    "OnsetDropped",
    "RecognitionFailed",
    "RecognitionStream",
    "Recognized",
    "Recognizer",
    "SileroVad",
    "SmartTurn",
    "SpeechOnset",
    "SpeechStarted",
    "Thresholds",
    "TranscribeRecognizer",
    "Transcript",
    "TurnDetector",
    "TurnEnded",
    "TurnModel",
    "TurnTooLong",
    "TurnWords",
    "Vad",
    "Verdict",
    "WhisperRecognizer",
    "asks",
    "backchannel_prompt",
    "default_turn_model",
    "dictating",
    "final_fall",
    "hearing_language_of",
    "judge_turn",
    "pitch_track",
    "strands",
    "turn_words",
    "unfinished",
    "whisper_model_dir",
    "words_of",
]
