"""AgentCore Memory as the conversation store: bedrock-agentcore's session manager, its redaction kept.

Imported only for ``CONVERSATION_STORE=agentcore-memory`` (it needs bedrock-agentcore's memory module).

bedrock-agentcore 1.25's ``AgentCoreMemorySessionManager.update_message`` replaces the message's event with
a new one made from ``session_message.message``, the original text, and ignores ``redact_message``, which
is what Strands' ``redact_latest_message`` sets: a redacted message (here: an interrupted answer rewritten
to what the caller heard) would be stored again as the text nobody heard. :class:`HeardMemorySessionManager`
folds the redaction into the message before that replacement, so the new event holds the redacted text.
"""

from __future__ import annotations

from typing import Any

from bedrock_agentcore.memory.integrations.strands.session_manager import AgentCoreMemorySessionManager
from strands.types.session import SessionMessage

__all__ = ["HeardMemorySessionManager"]


class HeardMemorySessionManager(AgentCoreMemorySessionManager):
    """bedrock-agentcore's session manager whose message update stores the redacted text, if any."""

    def update_message(
        self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any
    ) -> None:
        """Replace the message's event with one holding ``session_message.to_message()`` (the redaction)."""
        if session_message.redact_message is not None:
            session_message = SessionMessage(
                message=session_message.redact_message,
                message_id=session_message.message_id,
                created_at=session_message.created_at,
            )
        super().update_message(session_id, agent_id, session_message, **kwargs)
