"""The agent integration: a Strands agent's token stream in, its answer spoken.

- :class:`VoiceCallbackHandler` is the agent's callback handler: the one voice pipeline (one way in for
  options, one event stream out, barge-in); :class:`VoicePlugin` is the same as a Strands plugin.
- :func:`run_voice` streams one answer's Leg 3 events from a handler made for it.
- :data:`NOTHING_HEARD` is what the agent remembers of an answer the caller heard nothing of.

Inside: the agent run under ``stream()`` (``_agent_run``), the responses in progress and the worker
threads at the Strands callback boundary (``_workers``), the rule for the handler in a callback chain
(``_callback_chain``) and what the agent remembers of an interrupted answer (``_answer_memory``).
"""

from __future__ import annotations

from strands_voice.agent._answer_memory import NOTHING_HEARD, AnswerMemory
from strands_voice.agent._handler import DEFAULT_MAX_QUEUED_EVENTS, VoiceCallbackHandler
from strands_voice.agent._plugin import VoicePlugin
from strands_voice.agent._run_voice import run_voice

__all__ = [
    "DEFAULT_MAX_QUEUED_EVENTS",
    "NOTHING_HEARD",
    "AnswerMemory",
    "VoiceCallbackHandler",
    "VoicePlugin",
    "run_voice",
]
