"""``run_voice``: the Leg 3 event stream of one agent answer, from a handler made for it.

A few lines over :meth:`strands_voice.VoiceCallbackHandler.stream`, which is the one voice
pipeline (the handler owns the chunking, the TTS session, the modes, barge-in and the bounded queue).
``run_voice`` builds a handler for the call, composes it with the agent's own callback handler for the
run, and yields the events (``agent_start`` … ``agent_end``) of PROTOCOL.md Leg 3.

The modes (``VoiceOptions.mode``) differ ONLY in when synthesis starts: ``bidi`` speaks each chunk as the
chunker releases it; ``batch`` (the fair baseline) waits for the whole text, then sends the fewest
requests that fit the endpoint's per-request limit (``max_request_chars``; usually one).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from strands_voice_protocol.events import Event

from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech import VoiceOptions

if TYPE_CHECKING:
    from strands import Agent

__all__ = ["run_voice"]


def run_voice(
    agent: Agent,
    prompt: Any,
    *,
    options: VoiceOptions | None = None,
    request_id: str | None = None,
    tts_url: str | None = None,
    **handler_args: Any,
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` on ``prompt`` and yield Leg 3 events, spoken as ``options`` say.

    Args:
        agent: The Strands agent; its own ``callback_handler`` still sees every event.
        prompt: The user's prompt.
        options: How to speak (mode, voice, speed, format, ...); None: ``VoiceOptions()`` (``bidi``).
        request_id: The id in ``agent_start`` (a random one when None).
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        **handler_args: The rest of :class:`~strands_voice.VoiceCallbackHandler`'s settings
            (``transport_factory``, timeouts, ``max_request_chars``, ``max_queued_events``).

    Returns:
        An async generator of events; ``aclose()`` it (or stop iterating) to cancel everything.
    """
    handler = VoiceCallbackHandler(tts_url, **handler_args)
    return handler.stream(agent, prompt, options=options, request_id=request_id)
