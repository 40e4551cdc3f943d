"""What a :class:`~strands_voice.listen.Listener` tells its user, each event defined once (times in seconds
of audio fed).

A caller's turn, as the events come: :class:`SpeechOnset` (a sound that may be speech) then either
:class:`OnsetDropped` (it was a click, a cough) or :class:`SpeechStarted` (a turn began); while the turn
goes on, :class:`CallerPaused` / :class:`CallerResumed` at each pause, partial :class:`Transcript` events;
then :class:`TurnEnded` (with the verdict that ended it, :class:`EndOfTurn`) and the final
:class:`Transcript`, or :class:`RecognitionFailed` in its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CallerPaused",
    "CallerResumed",
    "EndOfTurn",
    "EndedBy",
    "ListenEvent",
    "OnsetDropped",
    "RecognitionFailed",
    "SpeechOnset",
    "SpeechStarted",
    "Transcript",
    "TurnEnded",
    "TurnTooLong",
]

#: What ended a turn: the turn-end model judged it complete, the silence timer ran out, or the turn
#: reached its longest length.
EndedBy = Literal["model", "silence", "max_turn"]


@dataclass(frozen=True)
class EndOfTurn:
    """Why a turn ended: ``by`` what, and the turn-end model's probability that it was complete (None
    when no model judged it)."""

    by: EndedBy
    p: float | None = None


@dataclass(frozen=True)
class SpeechOnset:
    """A sound that may be speech began at ``at_s`` (the first speech frame; a turn needs more).

    Over an answer this is when the answer pauses: the caller may be starting to speak.
    """

    at_s: float


@dataclass(frozen=True)
class OnsetDropped:
    """The onset at ``at_s`` ended before ``min_speech_s``: a click or a cough, no turn."""

    at_s: float


@dataclass(frozen=True)
class SpeechStarted:
    """A turn started: speech began at ``at_s`` (reported once ``min_speech_s`` of it was heard)."""

    at_s: float


@dataclass(frozen=True)
class CallerPaused:
    """The caller went silent at ``at_s``; the turn may go on (its end is judged during the pause)."""

    at_s: float


@dataclass(frozen=True)
class CallerResumed:
    """The caller spoke again at ``at_s``, in the same turn."""

    at_s: float


@dataclass(frozen=True)
class TurnEnded:
    """The caller's turn ended: its speech ran from ``speech_start_s`` to ``speech_end_s``, and the end was
    found at ``at_s``, for the reason in ``end_of_turn``."""

    speech_start_s: float
    speech_end_s: float
    at_s: float
    end_of_turn: EndOfTurn


@dataclass(frozen=True)
class Transcript:
    """The caller's words: partials (``final=False``: a streaming engine's, or the recognition made at a
    pause) and the final text of the turn.

    Attributes:
        text: The words (a final may be empty: a noise long enough to count as speech).
        final: Whether this is the turn's last text.
        confidence: How sure the recognizer is of the words (0..1; None: it does not say).
        end_of_turn: On a final: why the turn ended.
    """

    text: str
    final: bool
    confidence: float | None = None
    end_of_turn: EndOfTurn | None = None


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


ListenEvent = (
    SpeechOnset
    | OnsetDropped
    | SpeechStarted
    | CallerPaused
    | CallerResumed
    | TurnEnded
    | Transcript
    | TurnTooLong
    | RecognitionFailed
)
