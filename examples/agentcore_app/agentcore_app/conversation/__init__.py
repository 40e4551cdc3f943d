"""The app's conversations: one Strands agent per AgentCore session id, one answer at a time, kept in a store.

- :class:`Conversations` (``_conversations``): the agents by session id, the lock that makes a new
  question barge in on the answer still speaking, the idle conversations leaving memory;
- :class:`ConversationStore` (``_store``): where a conversation is kept (``CONVERSATION_*``: a local
  directory, S3, AgentCore Memory, or nowhere) and the session id rules;
- ``_store_writes``: the store's writes on a writer thread per conversation, off the server's loop;
- ``_agentcore_memory``: bedrock-agentcore's AgentCore Memory session manager, its message update made to
  keep a redaction (the heard part of an interrupted answer).
"""

from __future__ import annotations

from agentcore_app.conversation._conversations import Conversation, Conversations, SessionBusyError
from agentcore_app.conversation._store import (
    DEFAULT_CONVERSATION_DIR,
    DEFAULT_CONVERSATION_PREFIX,
    DEFAULT_IDLE_S,
    DEFAULT_WINDOW,
    MAX_SESSION_ID_CHARS,
    STORES,
    ConversationStore,
    InvalidSessionIdError,
    validate_session_id,
)
from agentcore_app.conversation._store_writes import (
    STORE_WRITE_FAILED,
    STORE_WRITE_PENDING,
    OffLoopSessionManager,
)

__all__ = [
    "DEFAULT_CONVERSATION_DIR",
    "DEFAULT_CONVERSATION_PREFIX",
    "DEFAULT_IDLE_S",
    "DEFAULT_WINDOW",
    "MAX_SESSION_ID_CHARS",
    "STORES",
    "STORE_WRITE_FAILED",
    "STORE_WRITE_PENDING",
    "Conversation",
    "ConversationStore",
    "Conversations",
    "InvalidSessionIdError",
    "OffLoopSessionManager",
    "SessionBusyError",
    "validate_session_id",
]
