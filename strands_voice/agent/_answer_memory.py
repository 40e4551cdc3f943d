"""What the agent remembers of an interrupted answer: exactly what the caller heard.

A barge-in (:meth:`~strands_voice.VoiceCallbackHandler.interrupt`) stops the speech; an
:class:`AnswerMemory` also stops the Strands agent that is writing the answer and fixes its memory:

- While the agent still runs the answer, ``agent.cancel(message=heard_text)`` (thread-safe): no more
  model tokens, no further tool calls; Strands ends the invocation with ``stop_reason == "cancelled"``
  and that message as the answer's last assistant message.
- Once the agent has finished writing (the audio is still playing), or when the cancel came too late to
  apply, the answer's last assistant message is rewritten to the heard text, and the agent's session
  manager (if any) persists the rewrite (``redact_latest_message``: the stored record then reads back as
  the heard text, after a restart too).
- When the invocation ended without an assistant message (it was stopped by force: the task running it
  was cancelled), the heard text is appended as the answer, so user and assistant turns still alternate.

The session manager's write is blocking I/O (a file, S3, AgentCore Memory), and a barge-in happens on the
loop that serves the caller (other callers too): it runs on a thread of its own, the agent's writes in
order, and the agent's next invocation waits for it before Strands stores its next message.

When nothing at all was heard the answer is :data:`NOTHING_HEARD` (an ellipsis): model APIs refuse a
blank message (Bedrock's Converse rejects an empty text block), and the conversation must stay usable.

An answer dropped before anything of it was heard (:meth:`AnswerMemory.dropped`: the caller went on, or
it was a speculation on a turn that was not over) leaves no trace: its agent is cancelled and every
message its invocation added (the question included: the next turn asks it again, joined to what the
caller added) is taken out of ``agent.messages`` once the invocation has ended (at the latest when the
agent's next invocation starts, for one stopped by force). No ellipsis turn, no question asked twice.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent, MessageAddedEvent

from strands_voice.agent._model_cancel import cancel_model_streams

if TYPE_CHECKING:
    from strands import Agent
    from strands.types.content import Message


logger = logging.getLogger(__name__)

#: The answer remembered when the caller heard nothing of it (a blank message is refused by model APIs).
NOTHING_HEARD: Final = "…"

#: Seconds the agent's next invocation (or the handler's close) waits for a rewrite to be stored.
STORE_WRITE_TIMEOUT: Final = 30.0


def remembered_text(heard: str) -> str:
    """What the agent keeps as an answer of which the caller heard ``heard``."""
    return heard if heard.strip() else NOTHING_HEARD


def _no_store() -> None:
    """The store write of an agent without a session manager."""


def _rewrite_messages(agent: Agent, text: str) -> Callable[[], None] | None:
    """Make ``text`` the agent's last assistant message in ``agent.messages`` now.

    Returns:
        The session-store write that persists the change (blocking I/O; a no-op without a session
        manager), or None when nothing changed.
    """
    messages = agent.messages
    if not messages:
        return None
    heard: Message = {"role": "assistant", "content": [{"text": text}]}
    # Strands 1.62 offers no public accessor for an agent's session manager: the agent keeps it in
    # `_session_manager` and itself calls its `redact_latest_message` the same way (a guardrail's
    # redaction). A plugin or hook cannot reach it either, so it is read here, in this one place.
    store: Any = getattr(agent, "_session_manager", None)
    if messages[-1]["role"] != "assistant":
        logger.debug("the invocation left no answer; the heard text becomes it")
        messages.append(heard)
        return _no_store if store is None else lambda: store.append_message(heard, agent)
    if messages[-1]["content"] == [{"text": text}]:
        return None
    messages[-1] = heard
    return _no_store if store is None else lambda: store.redact_latest_message(heard, agent)


class _StoreWrites:
    """One agent's session-store writes, each on a short thread of its own, in order, off every loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: threading.Thread | None = None

    def run(self, write: Callable[[], None]) -> None:
        """Start ``write`` once the writes before it are done (never blocks)."""
        with self._lock:
            thread = threading.Thread(
                target=self._write, args=(self._last, write), name="voice-answer-store", daemon=True
            )
            self._last = thread
            thread.start()

    @staticmethod
    def _write(previous: threading.Thread | None, write: Callable[[], None]) -> None:
        if previous is not None:
            previous.join()
        try:
            write()
        except Exception:
            # The answer was spoken and the agent's messages hold the heard text; only the store missed it.
            logger.exception("code=<store_write_failed> | the heard answer was not stored")

    @property
    def pending(self) -> bool:
        """True while a write is still running."""
        with self._lock:
            return self._last is not None and self._last.is_alive()

    def settle(self, timeout: float) -> bool:
        """Wait (blocking) until every write started so far is done; False if ``timeout`` passed first."""
        with self._lock:
            last = self._last
        if last is None:
            return True
        last.join(timeout)
        return not last.is_alive()


class AnswerMemory:
    """Ties one spoken answer to the agent writing it (see the module docstring). Thread-safe.

    Made by :meth:`AnswerMemories.bind`: the agent's ``AfterInvocationEvent`` (fired before Strands
    clears its cancel signal) then calls :meth:`finished`, so a barge-in after that point rewrites the
    answer instead of cancelling an agent that is no longer running (which would cancel its NEXT
    invocation).

    Args:
        agent: The agent whose invocation produces the answer.
        writes: Where the agent's store writes run.
        release: Called once with this memory when the invocation ends.
    """

    def __init__(
        self, agent: Agent, writes: _StoreWrites, release: Callable[[AnswerMemory], None] | None = None
    ) -> None:
        self.agent = agent
        self._writes = writes
        self._release = release
        self._lock = threading.Lock()
        self._running = True
        self._heard: str | None = None
        self._dropped = False
        self._added: list[Message] = []  # what the invocation added to agent.messages

    @property
    def heard(self) -> str | None:
        """The answer remembered (:func:`remembered_text` of the heard text), once interrupted."""
        return self._heard

    def _rewrite(self) -> None:
        """The heard text becomes the answer now; its store write runs on a thread. Hold the lock."""
        assert self._heard is not None
        write = _rewrite_messages(self.agent, self._heard)
        if write is not None and write is not _no_store:
            self._writes.run(write)

    def added(self, message: Message) -> None:
        """The invocation added ``message`` to the agent's history."""
        with self._lock:
            self._added.append(message)

    def dropped(self) -> None:
        """Nothing of the answer was heard and it is not to be remembered: stop the agent, and take what
        its invocation added out of its history once it has ended."""
        with self._lock:
            if self._heard is not None or self._dropped:
                return
            self._dropped = True
            if self._running:
                logger.debug("cancelling a dropped answer")
                self.agent.cancel()
                return
        self.forget()

    @property
    def forgetting(self) -> bool:
        """Whether the answer was dropped (its messages are to be taken out)."""
        return self._dropped

    def forget(self) -> None:
        """Take the dropped invocation's messages out of the agent's history (idempotent)."""
        with self._lock:
            added, self._added = self._added, []
        if not added:
            return
        ids = {id(message) for message in added}
        kept = [message for message in self.agent.messages if id(message) not in ids]
        logger.debug("messages=<%d> | a dropped answer forgotten", len(self.agent.messages) - len(kept))
        self.agent.messages[:] = kept

    def interrupted(self, heard: str) -> None:
        """The caller barged in having heard ``heard``: stop the agent, or fix its finished answer."""
        with self._lock:
            if self._heard is not None or self._dropped:
                return
            self._heard = remembered_text(heard)
            if self._running:
                logger.debug("cancelling the agent's answer")
                self.agent.cancel(message=self._heard)
                return
            self._rewrite()

    def finished(self) -> None:
        """The agent's invocation ended: an interrupted answer's last message becomes the heard text.

        Also covers a cancel that arrived after Strands' last check (the model had already finished).
        """
        if self._release is not None:
            self._release(self)
        with self._lock:
            self._running = False
            if self._heard is not None:
                self._rewrite()
        if self._dropped:
            self.forget()


class _AgentTie:
    """One agent's hooks, added once whichever handler speaks for it: its store writes (in order, across
    handlers) and the memory of the answer it is writing now."""

    def __init__(self, agent: Agent) -> None:
        self.writes = _StoreWrites()
        self.current: AnswerMemory | None = None
        self.dropped: list[AnswerMemory] = []  # dropped answers whose invocation may not have ended yet
        agent.hooks.add_callback(AfterInvocationEvent, self._invocation_ended)
        agent.hooks.add_callback(BeforeInvocationEvent, self._invocation_starting)
        agent.hooks.add_callback(MessageAddedEvent, self._message_added)
        cancel_model_streams(agent)  # the cancel stops the model's stream, whatever the model

    def _invocation_ended(self, event: AfterInvocationEvent) -> None:
        with _TIES_LOCK:
            memory = self.current
        if memory is not None:
            memory.finished()

    def _message_added(self, event: MessageAddedEvent) -> None:
        with _TIES_LOCK:
            memory = self.current
        if memory is not None:
            memory.added(event.message)

    async def _invocation_starting(self, event: BeforeInvocationEvent) -> None:
        with _TIES_LOCK:
            dropped, self.dropped = self.dropped, []
        for memory in dropped:  # one stopped by force never saw its invocation end
            memory.forget()
        if self.writes.pending and not await asyncio.to_thread(self.writes.settle, STORE_WRITE_TIMEOUT):
            logger.warning("code=<store_write_slow> | the last heard answer is still being stored")


_TIES_LOCK: Final = threading.Lock()
#: Every agent a handler spoke for, its tie (an app makes a handler per answer; the agent lives on).
_TIES: weakref.WeakKeyDictionary[Any, _AgentTie] = weakref.WeakKeyDictionary()


class AnswerMemories:
    """The answers one handler speaks, each tied to the agent writing it, and the agents' store writes.

    Each agent gets two hooks, once in its life however many handlers speak for it (an agent tie):
    ``AfterInvocationEvent`` ends its current answer's invocation (:meth:`AnswerMemory.finished`);
    ``BeforeInvocationEvent`` lets the next invocation wait for the answer's rewrite to be stored, so
    Strands' next message is stored after it. Thread-safe.
    """

    def __init__(self) -> None:
        self._ties: weakref.WeakSet[_AgentTie] = weakref.WeakSet()

    def bind(self, agent: Agent) -> AnswerMemory:
        """The memory of the answer ``agent`` is writing (or is about to write)."""
        with _TIES_LOCK:
            tie = _TIES.get(agent)
            if tie is None:
                tie = _TIES[agent] = _AgentTie(agent)
            memory = AnswerMemory(agent, tie.writes, self._release)
            tie.current = memory
            self._ties.add(tie)
        return memory

    @staticmethod
    def drop(memory: AnswerMemory) -> None:
        """``memory``'s answer is dropped (see :meth:`AnswerMemory.dropped`)."""
        with _TIES_LOCK:
            tie = _TIES.get(memory.agent)
            if tie is not None:
                tie.dropped.append(memory)
        memory.dropped()

    @staticmethod
    def _release(memory: AnswerMemory) -> None:
        with _TIES_LOCK:
            tie = _TIES.get(memory.agent)
            if tie is not None and tie.current is memory:
                tie.current = None

    def settle(self, timeout: float = STORE_WRITE_TIMEOUT) -> bool:
        """Wait (blocking) until every store write started so far for this handler's agents is done;
        False if ``timeout`` passed."""
        with _TIES_LOCK:
            every = [tie.writes for tie in self._ties]
        return all([writes.settle(timeout) for writes in every])
