"""What the agent remembers of an interrupted answer: exactly what the caller heard.

A barge-in (:meth:`~strands_voice.handler.VoiceCallbackHandler.interrupt`) stops the speech; an
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

When nothing at all was heard the answer is :data:`NOTHING_HEARD` (an ellipsis): model APIs refuse a
blank message (Bedrock's Converse rejects an empty text block), and the conversation must stay usable.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any, Final

from strands.hooks import AfterInvocationEvent

if TYPE_CHECKING:
    from strands import Agent
    from strands.types.content import Message

__all__ = ["NOTHING_HEARD", "AnswerMemory", "remembered_text", "rewrite_last_answer"]

logger = logging.getLogger(__name__)

#: The answer remembered when the caller heard nothing of it (a blank message is refused by model APIs).
NOTHING_HEARD: Final = "…"


def remembered_text(heard: str) -> str:
    """What the agent keeps as an answer of which the caller heard ``heard``."""
    return heard if heard.strip() else NOTHING_HEARD


def rewrite_last_answer(agent: Agent, text: str) -> bool:
    """Make ``text`` the agent's last assistant message, in memory and in its session store.

    Args:
        agent: The agent whose answer was cut.
        text: What the caller heard of it.

    Returns:
        Whether the messages changed (False: the last one already said ``text``, or there is none).
    """
    messages = agent.messages
    if not messages:
        return False
    heard: Message = {"role": "assistant", "content": [{"text": text}]}
    # Strands keeps the session manager private; it is the hook that stored the messages changed here.
    session_manager: Any = getattr(agent, "_session_manager", None)
    if messages[-1]["role"] != "assistant":
        logger.debug("the invocation left no answer; the heard text becomes it")
        messages.append(heard)
        if session_manager is not None:
            session_manager.append_message(heard, agent)
        return True
    if messages[-1]["content"] == [{"text": text}]:
        return False
    messages[-1] = heard
    if session_manager is not None:
        session_manager.redact_latest_message(heard, agent)
    return True


#: The answer each agent is writing now, for its ``AfterInvocationEvent`` hook.
_CURRENT: weakref.WeakKeyDictionary[Any, AnswerMemory] = weakref.WeakKeyDictionary()
_HOOKED: weakref.WeakSet[Any] = weakref.WeakSet()
_REGISTRY_LOCK = threading.Lock()


def _invocation_ended(event: AfterInvocationEvent) -> None:
    with _REGISTRY_LOCK:
        memory = _CURRENT.pop(event.agent, None)
    if memory is not None:
        memory.finished()


class AnswerMemory:
    """Ties one spoken answer to the agent writing it (see the module docstring). Thread-safe.

    Create it with :meth:`bind`: the agent's ``AfterInvocationEvent`` (fired before Strands clears its
    cancel signal) then calls :meth:`finished`, so a barge-in after that point rewrites the answer
    instead of cancelling an agent that is no longer running (which would cancel its NEXT invocation).

    Args:
        agent: The agent whose invocation produces the answer.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._lock = threading.Lock()
        self._running = True
        self._heard: str | None = None

    @classmethod
    def bind(cls, agent: Agent) -> AnswerMemory:
        """The memory of the answer ``agent`` is writing (or is about to write)."""
        memory = cls(agent)
        with _REGISTRY_LOCK:
            if agent not in _HOOKED:
                agent.hooks.add_callback(AfterInvocationEvent, _invocation_ended)
                _HOOKED.add(agent)
            _CURRENT[agent] = memory
        return memory

    @property
    def heard(self) -> str | None:
        """The answer remembered (:func:`remembered_text` of the heard text), once interrupted."""
        return self._heard

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
            rewrite_last_answer(self.agent, self._heard)

    def finished(self) -> None:
        """The agent's invocation ended: an interrupted answer's last message becomes the heard text.

        Also covers a cancel that arrived after Strands' last check (the model had already finished).
        """
        with _REGISTRY_LOCK:
            if _CURRENT.get(self.agent) is self:
                del _CURRENT[self.agent]
        with self._lock:
            self._running = False
            if self._heard is not None:
                rewrite_last_answer(self.agent, self._heard)
