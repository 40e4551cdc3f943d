"""What a :class:`~strands_voice.listen.Listener` tells its user (times in seconds of audio fed)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListenEvent", "RecognitionFailed", "SpeechStarted", "Transcript", "TurnEnded", "TurnTooLong"]


@dataclass(frozen=True)
class SpeechStarted:
    """The caller started speaking at ``at_s`` (reported once ``min_speech_s`` of speech was heard).

    During an answer this is a barge-in: the user of the listener decides to interrupt.
    """

    at_s: float


@dataclass(frozen=True)
class TurnEnded:
    """The caller's turn ended: speech ended at ``speech_end_s``, found at ``at_s`` (after the silence)."""

    speech_end_s: float
    at_s: float


@dataclass(frozen=True)
class Transcript:
    """The caller's words: partials (``final=False``) where the engine gives them; a final ends the turn.

    A final text may be empty (the engine heard no words: a noise long enough to count as speech).
    """

    text: str
    final: bool


@dataclass(frozen=True)
class TurnTooLong:
    """The turn reached ``max_turn_s`` and was ended there (its final :class:`Transcript` follows)."""

    at_s: float


@dataclass(frozen=True)
class RecognitionFailed:
    """The recognizer failed on a turn: its words are lost (no final :class:`Transcript` for it); the next
    turn is recognized afresh.

    ``code`` is a :data:`~strands_voice_protocol.errors.RecognitionErrorCode` (``internal`` when the engine
    failed in a way it did not name); ``retryable`` is False when later turns will fail the same way (no
    credentials, a refused setting).
    """

    code: str
    message: str
    retryable: bool


ListenEvent = SpeechStarted | TurnEnded | Transcript | TurnTooLong | RecognitionFailed
