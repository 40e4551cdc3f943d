"""Where conversations are kept: a Strands session manager per AgentCore session id, chosen by env.

- ``CONVERSATION_STORE=file`` (default): a local directory, Strands' ``FileSessionManager``;
  ``CONVERSATION_DIR`` (default ``~/.strands-voice/conversations``).
- ``s3``: an S3 bucket, Strands' ``S3SessionManager``; ``CONVERSATION_BUCKET``, ``CONVERSATION_PREFIX``
  (default ``conversations/``).
- ``agentcore-memory``: AgentCore Memory, bedrock-agentcore's Strands session manager (its message
  update made to keep a redaction: ``_agentcore_memory``); ``AGENTCORE_MEMORY_ID``.
- ``none``: the app's memory only (lost on restart).

``CONVERSATION_WINDOW`` bounds the messages an agent keeps (Strands' ``SlidingWindowConversationManager``,
default 40) and ``CONVERSATION_IDLE_S`` how long an idle conversation stays in the app's memory (default
900 s; the store keeps it). A session id becomes part of a path or key only after
:func:`validate_session_id`: letters, digits, ``-``, ``_`` and ``.``, first a letter or digit, at most
``MAX_SESSION_ID_CHARS``; anything else is refused, so no id can name a place outside the store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

from strands.session.session_manager import SessionManager
from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError

from agentcore_app.config import positive_from_env
from agentcore_app.payload import PayloadError

__all__ = [
    "DEFAULT_CONVERSATION_DIR",
    "DEFAULT_CONVERSATION_PREFIX",
    "DEFAULT_IDLE_S",
    "DEFAULT_WINDOW",
    "MAX_SESSION_ID_CHARS",
    "STORES",
    "ConversationStore",
    "InvalidSessionIdError",
    "validate_session_id",
]

STORES: Final = ("file", "s3", "agentcore-memory", "none")
StoreKind = Literal["file", "s3", "agentcore-memory", "none"]

DEFAULT_CONVERSATION_DIR: Final = Path.home() / ".strands-voice" / "conversations"
DEFAULT_CONVERSATION_PREFIX: Final = "conversations/"
DEFAULT_WINDOW: Final = 40
DEFAULT_IDLE_S: Final = 900.0
#: AgentCore session ids are 33 to 256 characters; locally any 1 to 256 will do.
MAX_SESSION_ID_CHARS: Final = 256

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

#: The actor of every conversation in AgentCore Memory (one caller per session id in this app).
_ACTOR_ID: Final = "voice-caller"


class InvalidSessionIdError(PayloadError):
    """A session id this app refuses (the caller's bad input: a 400 ``invalid_request``)."""


def validate_session_id(session_id: str) -> str:
    """The session id, if it is safe as a file name and an S3 key part.

    Raises:
        InvalidSessionIdError: Empty, longer than ``MAX_SESSION_ID_CHARS``, or a character outside
            ``[A-Za-z0-9._-]`` (or a first character that is not a letter or a digit).
    """
    if not 0 < len(session_id) <= MAX_SESSION_ID_CHARS:
        raise InvalidSessionIdError(f"the session id must be 1 to {MAX_SESSION_ID_CHARS} characters")
    if not _SESSION_ID.fullmatch(session_id):
        raise InvalidSessionIdError(
            "the session id may hold only letters, digits, '-', '_' and '.', and start with a letter or digit"
        )
    return session_id


@dataclass(frozen=True)
class ConversationStore:
    """Which store keeps conversations, and how much of them (see the module docstring).

    Attributes:
        kind: ``file``, ``s3``, ``agentcore-memory`` or ``none``.
        directory: The ``file`` store's directory.
        bucket: The ``s3`` store's bucket.
        prefix: The ``s3`` store's key prefix.
        memory_id: The ``agentcore-memory`` store's memory.
        window: Messages an agent keeps.
        idle_s: Seconds an idle conversation stays in memory.
        region_name: AWS region of the S3 / AgentCore Memory clients (None: boto3's default).
    """

    kind: StoreKind = "file"
    directory: Path = DEFAULT_CONVERSATION_DIR
    bucket: str | None = None
    prefix: str = DEFAULT_CONVERSATION_PREFIX
    memory_id: str | None = None
    window: int = DEFAULT_WINDOW
    idle_s: float = DEFAULT_IDLE_S
    region_name: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in STORES:
            known = ", ".join(STORES)
            raise ConfigurationError(f"CONVERSATION_STORE must be one of {known} (got {self.kind!r})")
        if self.kind == "s3" and not self.bucket:
            raise ConfigurationError("CONVERSATION_STORE=s3 needs CONVERSATION_BUCKET")
        if self.kind == "agentcore-memory" and not self.memory_id:
            raise ConfigurationError("CONVERSATION_STORE=agentcore-memory needs AGENTCORE_MEMORY_ID")
        if self.window < 2:
            raise ConfigurationError("CONVERSATION_WINDOW must be at least 2 messages")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ConversationStore:
        """Read ``CONVERSATION_*`` and ``AGENTCORE_MEMORY_ID``.

        Raises:
            ConfigurationError: An unknown store, a store without its setting, or a bad number.
        """
        env = os.environ if environ is None else environ
        kind = env.get("CONVERSATION_STORE", "").strip().lower() or "file"
        directory = env.get("CONVERSATION_DIR", "").strip()
        return cls(
            kind=cast("StoreKind", kind),
            directory=Path(directory).expanduser() if directory else DEFAULT_CONVERSATION_DIR,
            bucket=env.get("CONVERSATION_BUCKET", "").strip() or None,
            prefix=env.get("CONVERSATION_PREFIX", DEFAULT_CONVERSATION_PREFIX).strip(),
            memory_id=env.get("AGENTCORE_MEMORY_ID", "").strip() or None,
            window=int(positive_from_env(env, "CONVERSATION_WINDOW", DEFAULT_WINDOW)),
            idle_s=positive_from_env(env, "CONVERSATION_IDLE_S", DEFAULT_IDLE_S),
            region_name=env.get("AWS_REGION", "").strip() or None,
        )

    def session_manager(self, session_id: str) -> SessionManager | None:
        """The session manager of ``session_id``'s conversation (None for the ``none`` store).

        Raises:
            InvalidSessionIdError: The id is refused (see :func:`validate_session_id`).
            MissingDependencyError: ``agentcore-memory`` without bedrock-agentcore's memory module.
        """
        session_id = validate_session_id(session_id)
        if self.kind == "file":
            from strands.session.file_session_manager import FileSessionManager

            return FileSessionManager(session_id=session_id, storage_dir=str(self.directory))
        if self.kind == "s3":
            from strands.session.s3_session_manager import S3SessionManager

            assert self.bucket is not None  # checked in __post_init__
            return S3SessionManager(
                session_id=session_id, bucket=self.bucket, prefix=self.prefix, region_name=self.region_name
            )
        if self.kind == "agentcore-memory":
            return self._agentcore_memory(session_id)
        return None

    def _agentcore_memory(self, session_id: str) -> SessionManager:
        try:
            from bedrock_agentcore.memory.integrations.strands.config import AgentCoreMemoryConfig

            from agentcore_app.conversation._agentcore_memory import HeardMemorySessionManager
        except ImportError as error:
            raise MissingDependencyError(
                "CONVERSATION_STORE=agentcore-memory needs bedrock-agentcore with its memory module: "
                "pip install 'bedrock-agentcore[strands-agents]'"
            ) from error
        assert self.memory_id is not None  # checked in __post_init__
        config = AgentCoreMemoryConfig(memory_id=self.memory_id, session_id=session_id, actor_id=_ACTOR_ID)
        # Redaction kept: an interrupted answer is stored as what was heard (_agentcore_memory).
        manager: Any = HeardMemorySessionManager(config, region_name=self.region_name)
        return cast("SessionManager", manager)
