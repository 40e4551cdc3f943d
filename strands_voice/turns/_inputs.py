"""What the turn-taking core is told besides the listener's events: the answer's progress, typed turns,
the Stop button, and time passing."""

from __future__ import annotations

from dataclasses import dataclass

from strands_voice.listen import ListenEvent

__all__ = ["AnswerEnded", "AnswerSpeaking", "StopPressed", "Tick", "TurnInput", "Typed"]


@dataclass(frozen=True)
class AnswerSpeaking:
    """The answer ``answer_id`` is being heard (its first audio went out)."""

    answer_id: str


@dataclass(frozen=True)
class AnswerEnded:
    """The answer ``answer_id`` ended, however it ended (spoken in full, interrupted, failed, dropped)."""

    answer_id: str


@dataclass(frozen=True)
class Typed:
    """A turn the caller typed (answered like a spoken one, never joined to one)."""

    text: str


@dataclass(frozen=True)
class StopPressed:
    """The caller asked the agent to stop without speaking (a Stop button)."""


@dataclass(frozen=True)
class Tick:
    """Time passed: the core's :attr:`~strands_voice.turns.TurnTaking.wakeup` came."""


TurnInput = ListenEvent | AnswerSpeaking | AnswerEnded | Typed | StopPressed | Tick
