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
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent

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


def rewrite_last_answer(agent: Agent, text: str) -> bool:
    """Make ``text`` the agent's last assistant message, in memory and (at once) in its session store.

    Args:
        agent: The agent whose answer was cut.
        text: What the caller heard of it.

    Returns:
        Whether the messages changed (False: the last one already said ``text``, or there is none).
    """
    write = _rewrite_messages(agent, text)
    if write is None:
        return False
    write()
    return True


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

    def interrupted(self, heard: str) -> None:
        """The caller barged in having heard ``heard``: stop the agent, or fix its finished answer."""
        with self._lock:
            if self._heard is not None:
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


class AnswerMemories:
    """The answers one handler speaks, each tied to the agent writing it, and the agents' store writes.

    Each agent gets two hooks, once: ``AfterInvocationEvent`` ends its current answer's invocation
    (:meth:`AnswerMemory.finished`); ``BeforeInvocationEvent`` lets the next invocation wait for the
    answer's rewrite to be stored, so Strands' next message is stored after it. Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: weakref.WeakKeyDictionary[Any, AnswerMemory] = weakref.WeakKeyDictionary()
        self._writes: weakref.WeakKeyDictionary[Any, _StoreWrites] = weakref.WeakKeyDictionary()

    def bind(self, agent: Agent) -> AnswerMemory:
        """The memory of the answer ``agent`` is writing (or is about to write)."""
        with self._lock:
            writes = self._writes.get(agent)
            if writes is None:
                writes = self._writes[agent] = _StoreWrites()
                agent.hooks.add_callback(AfterInvocationEvent, self._invocation_ended)
                agent.hooks.add_callback(BeforeInvocationEvent, self._invocation_starting)
            memory = AnswerMemory(agent, writes, self._release)
            self._current[agent] = memory
        return memory

    def _release(self, memory: AnswerMemory) -> None:
        with self._lock:
            if self._current.get(memory.agent) is memory:
                del self._current[memory.agent]

    def _invocation_ended(self, event: AfterInvocationEvent) -> None:
        with self._lock:
            memory = self._current.get(event.agent)
        if memory is not None:
            memory.finished()

    async def _invocation_starting(self, event: BeforeInvocationEvent) -> None:
        with self._lock:
            writes = self._writes.get(event.agent)
        if writes is not None and writes.pending:
            if not await asyncio.to_thread(writes.settle, STORE_WRITE_TIMEOUT):
                logger.warning("code=<store_write_slow> | the last heard answer is still being stored")

    def settle(self, timeout: float = STORE_WRITE_TIMEOUT) -> bool:
        """Wait (blocking) until every store write started so far is done; False if ``timeout`` passed."""
        with self._lock:
            every = list(self._writes.values())
        return all([writes.settle(timeout) for writes in every])
