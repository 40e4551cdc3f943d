"""What one answer of the cascade runs on: :class:`AnswerParts` (the model, the conversation, the ids)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from strands.models.model import Model
from strands.types.content import Messages
from strands.types.tools import ToolSpec

__all__ = ["AnswerParts", "Marks"]

#: ``time.perf_counter()`` of an answer's milestones, by name.
Marks = dict[str, float]


@dataclass
class AnswerParts:
    """What an answer runs on (the cascade's state for this answer).

    Attributes:
        answer_id: The response id of the ``BidiResponseStart/StopEvent``.
        model: The Strands text model.
        system_prompt: The agent's system prompt.
        tool_specs: The agent's tools.
        conversation: The model's conversation (appended to and, after a barge-in, rewritten in place).
        marks: ``time.perf_counter()`` of the answer's milestones (``first_text``, ``first_sentence``,
            ``first_audio``), for the bench.
        first_message: Where this answer's messages begin in ``conversation`` (its question first).
        lead_s: How far the emitted audio may run ahead of what the caller has played.
        on_speaking: Called once, when the answer's first audio is emitted.
        held: Emit nothing until :meth:`SpokenAnswer.release` (a speculation).
    """

    answer_id: str
    model: Model
    system_prompt: str | None
    tool_specs: list[ToolSpec]
    conversation: Messages
    marks: Marks = field(default_factory=dict)
    first_message: int = 0
    lead_s: float = 0.1
    on_speaking: Callable[[], None] | None = None
    held: bool = False
