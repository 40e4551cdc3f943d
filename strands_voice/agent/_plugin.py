"""``VoicePlugin``: the Strands plugin form of :class:`~strands_voice.VoiceCallbackHandler`.

``Agent(plugins=[VoicePlugin("ws://127.0.0.1:8080")])`` speaks like the callback handler does, and keeps
the agent's own callback handler (composed with the voice one). Through the agent's invocation hooks it
also opens the TTS session as the invocation begins, so connecting overlaps the model's time to first
token, and it ends the response's speech when the invocation ends even if no ``result=`` call came (an
error mid-answer). A barge-in (``plugin.handler.interrupt()``) cancels the agent's answer and leaves, as
that answer, what the caller heard.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent
from strands.plugins import Plugin

from strands_voice.agent._callback_chain import joined
from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech import VOICE_OPTIONS_KEY

if TYPE_CHECKING:
    from strands import Agent

__all__ = ["VoicePlugin"]


class VoicePlugin(Plugin):
    """Give an agent a voice through ``Agent(plugins=[...])``.

    Args:
        tts_url: The Leg 1 endpoint (``ws://…``, ``http://…`` or ``sagemaker://…``); ignored when
            ``handler`` is given.
        handler: An existing handler to use (for its callbacks and ``events()``).
        **handler_options: Passed to :class:`VoiceCallbackHandler` (``options``, ``on_audio``,
            ``on_event``, timeouts, ...).

    Attributes:
        handler: The voice callback handler this plugin drives; ``plugin.handler.wait()`` waits for the
            last audio, ``plugin.handler.events()`` iterates its events.

    A request's own options: ``agent("…", invocation_state={VOICE_OPTIONS_KEY: VoiceOptions(...)})``.
    """

    name = "strands-voice"

    def __init__(
        self,
        tts_url: str | None = None,
        *,
        handler: VoiceCallbackHandler | None = None,
        **handler_options: Any,
    ) -> None:
        self.handler = handler if handler is not None else VoiceCallbackHandler(tts_url, **handler_options)
        super().__init__()

    def init_agent(self, agent: Agent) -> None:
        """Compose the voice handler with the agent's own callback handler (unless that already reaches
        it) and register the hooks."""
        agent.callback_handler = joined(agent.callback_handler, self.handler)
        agent.add_hook(self.open_speech, BeforeInvocationEvent)
        agent.add_hook(self.close_speech, AfterInvocationEvent)

    def open_speech(self, event: BeforeInvocationEvent) -> None:
        """Open the TTS session while the model is still thinking."""
        self.handler.begin_response(event.invocation_state.get(VOICE_OPTIONS_KEY), agent=event.agent)

    def close_speech(self, event: AfterInvocationEvent) -> None:
        """End the response's speech: the remaining text is flushed and spoken, then the session closes."""
        self.handler.end_response()
