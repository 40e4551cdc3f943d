"""``run_voice``: the Leg 3 event stream of one agent answer, in ``bidi`` or ``batch`` mode.

A few lines over :meth:`strands_voice.handler.VoiceCallbackHandler.stream`, which is the one voice
pipeline (the handler owns the chunking, the TTS session, the modes, barge-in and the bounded queue).
``run_voice`` builds a handler for the call, composes it with the agent's own callback handler for the
run, and yields the events (``agent_start`` … ``agent_end``) of PROTOCOL.md Leg 3.

The modes differ ONLY in when synthesis starts: ``bidi`` speaks each chunk as the chunker releases it;
``batch`` (the fair baseline) waits for the whole text, then sends the fewest requests that fit the
endpoint's per-request limit (``max_request_chars``; usually one, ``audio_chunk.sentence`` 0).

(This module was ``strands_voice.modes`` until issue 14; ``VoiceOptions``, ``Mode``, ``split_for_requests``
and the rest stay importable from here.)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.events import Event

from strands_voice.handler import DEFAULT_MAX_QUEUED_EVENTS, VoiceCallbackHandler
from strands_voice.speaker import DEFAULT_MAX_REQUEST_CHARS as DEFAULT_MAX_REQUEST_CHARS
from strands_voice.speaker import MODES, Mode, TransportFactory, VoiceOptions
from strands_voice.speaker import Speaker as Speaker
from strands_voice.speaker import split_for_requests as split_for_requests

if TYPE_CHECKING:
    from strands import Agent

# Also importable from here, as before: VoiceOptions, Mode, TransportFactory, Speaker, split_for_requests,
# DEFAULT_MAX_REQUEST_CHARS (owned by strands_voice.speaker).
__all__ = ["run_batch", "run_bidi", "run_voice"]


def run_voice(
    mode: Mode,
    agent: Agent,
    prompt: str,
    *,
    tts_url: str | None = None,
    options: VoiceOptions | None = None,
    request_id: str | None = None,
    transport_factory: TransportFactory | None = None,
    connect_timeout: float = 10.0,
    silence_timeout: float = 30.0,
    max_request_chars: int = DEFAULT_MAX_REQUEST_CHARS,
    max_queued_events: int = DEFAULT_MAX_QUEUED_EVENTS,
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` on ``prompt`` and yield Leg 3 events, speaking in ``mode``.

    Args:
        mode: ``bidi`` (speak while the agent writes) or ``batch`` (speak the whole answer at the end).
        agent: The Strands agent; its own ``callback_handler`` still sees every event.
        prompt: The user's prompt.
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``).
        options: Voice, speed and output format (its ``mode`` is replaced by ``mode``).
        request_id: The id in ``agent_start`` (a random one when None).
        transport_factory: Creates the transport instead of ``tts_url`` (tests, custom transports).
        connect_timeout: Seconds opening the TTS session may take.
        silence_timeout: Seconds the endpoint may stay silent while audio is owed.
        max_request_chars: Batch mode's per-request text limit (the endpoint's ``max_text_chars``).
        max_queued_events: Events held for a slow consumer before the run waits for it.

    Returns:
        An async generator of events; ``aclose()`` it (or stop iterating) to cancel everything.
    """
    if mode not in MODES:
        raise ConfigurationError(f"unknown mode {mode!r}; expected 'bidi' or 'batch'")
    handler = VoiceCallbackHandler(
        tts_url,
        transport_factory=transport_factory,
        connect_timeout=connect_timeout,
        silence_timeout=silence_timeout,
        max_request_chars=max_request_chars,
        max_queued_events=max_queued_events,
    )
    request = replace(options or VoiceOptions(), mode=mode)
    return handler.stream(agent, prompt, options=request, request_id=request_id)


def run_bidi(agent: Agent, prompt: str, **kwargs: Any) -> AsyncGenerator[Event, None]:
    """``run_voice("bidi", agent, prompt, **kwargs)``: speech starts with the first text chunk."""
    return run_voice("bidi", agent, prompt, **kwargs)


def run_batch(agent: Agent, prompt: str, **kwargs: Any) -> AsyncGenerator[Event, None]:
    """``run_voice("batch", agent, prompt, **kwargs)``: one synthesis request after the full answer."""
    return run_voice("batch", agent, prompt, **kwargs)
