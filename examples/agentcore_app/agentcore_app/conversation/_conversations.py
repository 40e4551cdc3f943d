"""The app's conversations: one Strands agent per AgentCore session id, one answer at a time.

An invocation that names a session (``X-Amzn-Bedrock-AgentCore-Runtime-Session-Id``, the runtime's
``context.session_id``) continues that session's conversation: its agent is kept in memory between
invocations (and loaded from the store, :mod:`agentcore_app.conversation._store`, after a restart or once
evicted), so the model sees the earlier turns. An invocation without a session id is a conversation of
its own (a fresh agent, nothing stored). A spoken call without a session id gets a one-off id
(:func:`one_off_session_id`, ``call-<32 hex>``, said in ``listening``): its turns are one conversation in
the app's memory, never written to the store, and it leaves memory once idle like any other (so no
``call-<uuid>`` conversation piles up in the store).

The store is written off the server's loop (``_store_writes``: a writer thread per
conversation, in order), so a slow store slows only its own session; a turn ends once its writes are
done (at most ``flush_s``), and a conversation whose writes are still running stays in memory. A store
write that fails is logged with a code and the answer goes on; a store that fails when a conversation
is opened leaves that conversation in the app's memory only (logged too). A conversation restored with a
question left unanswered (the app was killed mid-answer) gets
:data:`~strands_voice.NOTHING_HEARD` as that answer, in memory and in the store: nothing of
it is known to have been heard, and user and assistant turns alternate again.

A session speaks one answer at a time: a new invocation barges in on the answer still speaking
(``handler.interrupt()``: that stream ends with ``interrupted``, and the agent is cancelled and remembers
what was heard), then waits for that answer's stream to end before its own starts. Each session has its
own lock: two sessions never wait on each other. A conversation idle for ``idle_s`` leaves memory (the
store keeps it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Final

from strands import Agent
from strands.agent.conversation_manager import SlidingWindowConversationManager
from strands.types.content import Message
from strands_voice_protocol.errors import StrandsVoiceError

from agentcore_app.conversation._store import ConversationStore, validate_session_id
from agentcore_app.conversation._store_writes import (
    STORE_WRITE_FAILED,
    STORE_WRITE_PENDING,
    OffLoopSessionManager,
)
from strands_voice import NOTHING_HEARD
from strands_voice.agent import VoiceCallbackHandler

__all__ = ["Conversation", "Conversations", "SessionBusyError", "is_one_off", "one_off_session_id"]

logger = logging.getLogger(__name__)

#: Seconds a new invocation waits for the session's previous answer to stop after the barge-in.
DEFAULT_TAKEOVER_S: Final = 15.0

#: Seconds a turn waits at its end for its store writes (they go on, in order, after that).
DEFAULT_FLUSH_S: Final = 10.0


#: The session id of a call that named none: kept in memory for the call, never stored.
_ONE_OFF: Final = re.compile(r"call-[0-9a-f]{32}")


def one_off_session_id() -> str:
    """A new one-off session id (``call-<32 hex>``), for a spoken call that named no session."""
    return f"call-{uuid.uuid4().hex}"


def is_one_off(session_id: str) -> bool:
    """Whether ``session_id`` is a one-off id (:func:`one_off_session_id`): its conversation is not stored."""
    return _ONE_OFF.fullmatch(session_id) is not None


class SessionBusyError(Exception):
    """The session's previous answer did not stop in time for the new one."""


@dataclass
class Conversation:
    """One session's agent, and the answer it is speaking.

    Attributes:
        session_id: The AgentCore session id (None: a one-off conversation).
        agent: The agent (created on the session's first turn in this process).
        voice: The voice handler of the answer speaking now, if any.
        request_id: That answer's request id (``agent_start.request_id``).
        last_used: ``time.monotonic()`` of the last turn's end.
        store: The agent's session manager, writing off the loop (None: nothing stored).
    """

    session_id: str | None
    agent: Agent | None = None
    voice: VoiceCallbackHandler | None = None
    request_id: str | None = None
    last_used: float = field(default_factory=time.monotonic)
    store: OffLoopSessionManager | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0  # turns waiting for, or holding, the lock


@dataclass(eq=False)
class Conversations:
    """The conversations of one app, by session id (see the module docstring).

    Attributes:
        store: Where conversations are kept, the window and the idle time.
        make_agent: Builds an agent from its session manager (None: not stored) and conversation manager.
        takeover_s: Seconds a barging-in invocation waits for the previous answer to stop.
        flush_s: Seconds a turn waits at its end for its store writes.
        clock: ``time.monotonic`` (tests pass a fake one).
    """

    store: ConversationStore
    make_agent: Callable[..., Agent]
    _: KW_ONLY
    takeover_s: float = DEFAULT_TAKEOVER_S
    flush_s: float = DEFAULT_FLUSH_S
    clock: Callable[[], float] = time.monotonic
    _live: dict[str, Conversation] = field(default_factory=dict, init=False, repr=False)

    def __len__(self) -> int:
        return len(self._live)

    def _conversation(self, session_id: str | None) -> Conversation:
        self._evict_idle()
        if session_id is None:
            return Conversation(None)
        conversation = self._live.get(session_id)
        if conversation is None:
            conversation = self._live[session_id] = Conversation(session_id, last_used=self.clock())
        return conversation

    def _evict_idle(self) -> None:
        """Drop conversations idle longer than ``idle_s`` from memory (their store keeps them)."""
        now = self.clock()
        for session_id, conversation in list(self._live.items()):
            writing = conversation.store is not None and conversation.store.busy
            if conversation.waiting == 0 and not writing and now - conversation.last_used > self.store.idle_s:
                logger.debug("session_id=<%s> | idle conversation leaves memory", session_id)
                del self._live[session_id]

    def _new_agent(self, conversation: Conversation) -> Agent:
        """The conversation's agent, restored from the store (blocking I/O: call it on a worker thread).

        A store that fails here (down, refusing writes) is logged with its code and the conversation is
        kept in the app's memory only, until it leaves memory: the answer is still spoken.
        """
        session_id = conversation.session_id
        try:
            agent, manager = self._restored(session_id)
        except StrandsVoiceError:
            raise  # a setting or an install is missing: the caller's to fix, not the store's fault
        except Exception as error:
            logger.error(
                "session_id=<%s>, code=<%s>, error=<%s> | the conversation store failed; kept in memory only",
                session_id,
                STORE_WRITE_FAILED,
                error,
            )
            window = SlidingWindowConversationManager(window_size=self.store.window)
            agent, manager = self.make_agent(session_manager=None, conversation_manager=window), None
        if agent.messages and agent.messages[-1]["role"] == "user":
            # The app stopped (was killed) before the answer was stored: none of it is known to be heard.
            logger.debug("session_id=<%s> | the last question was left unanswered", session_id)
            unanswered: Message = {"role": "assistant", "content": [{"text": NOTHING_HEARD}]}
            agent.messages.append(unanswered)
            if manager is not None:
                manager.append_message(unanswered, agent)
        conversation.store = manager
        return agent

    def _restored(self, session_id: str | None) -> tuple[Agent, OffLoopSessionManager | None]:
        inner = None
        if session_id is not None and not is_one_off(session_id):  # a one-off call's turns stay in memory
            inner = self.store.session_manager(session_id)
        manager = None if inner is None else OffLoopSessionManager(inner)
        window = SlidingWindowConversationManager(window_size=self.store.window)
        return self.make_agent(session_manager=manager, conversation_manager=window), manager

    async def _stored(self, conversation: Conversation) -> None:
        """Wait (at most ``flush_s``) for the writes of the turn that ends."""
        if conversation.store is None:
            return
        try:
            await asyncio.wait_for(conversation.store.flushed(), self.flush_s)
        except TimeoutError:
            logger.warning(
                "session_id=<%s>, code=<%s> | the store is still writing the turn; the writes go on",
                conversation.session_id,
                STORE_WRITE_PENDING,
            )

    def interrupt(self, session_id: str, request_id: str | None = None) -> bool:
        """Barge in on the answer ``session_id`` is speaking, if any (the page's Stop button).

        Args:
            session_id: The session.
            request_id: Only if it is this answer (a late Stop must not cut the session's next answer).

        Returns:
            Whether an answer was interrupted.
        """
        conversation = self._live.get(session_id)
        if conversation is None or conversation.voice is None:
            return False
        if request_id is not None and request_id != conversation.request_id:
            return False
        return conversation.voice.interrupt()

    @contextlib.asynccontextmanager
    async def agent_for_answer(
        self, session_id: str | None, voice: VoiceCallbackHandler, request_id: str | None = None
    ) -> AsyncIterator[Agent]:
        """The session's agent for one answer spoken by ``voice``, once the previous answer has stopped.

        Raises:
            InvalidSessionIdError: The session id is refused (checked before anything is kept).
            SessionBusyError: The previous answer did not stop within ``takeover_s``.
        """
        if session_id is not None:
            validate_session_id(session_id)
        conversation = self._conversation(session_id)
        conversation.waiting += 1
        try:
            speaking = conversation.voice
            if speaking is not None:
                logger.debug("session_id=<%s> | a new invocation barges in", session_id)
                speaking.interrupt()
            try:
                await asyncio.wait_for(conversation.lock.acquire(), self.takeover_s)
            except TimeoutError as error:
                raise SessionBusyError("the session's previous answer is still speaking") from error
            try:
                if conversation.agent is None:
                    # Loading a stored conversation is blocking I/O (files, S3): off the server's loop.
                    conversation.agent = await asyncio.to_thread(self._new_agent, conversation)
                conversation.voice, conversation.request_id = voice, request_id
                yield conversation.agent
            finally:
                conversation.voice = conversation.request_id = None
                try:
                    await self._stored(conversation)
                finally:
                    conversation.last_used = self.clock()
                    conversation.lock.release()
        finally:
            conversation.waiting -= 1
