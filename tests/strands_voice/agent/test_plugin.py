"""VoicePlugin: the plugin form, on a real Strands Agent (scripted model) against the REAL endpoint."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from strands import Agent
from strands.handlers.callback_handler import CompositeCallbackHandler

from strands_voice.agent._plugin import VoicePlugin
from strands_voice.transports._websocket import WebSocketTransport

pytestmark = pytest.mark.timeout(240)

ANSWER = "Hi there! The plan costs $24.99 per month. You can cancel online."


class TimedTransport(WebSocketTransport):
    """The real WebSocket transport, noting when each connect began."""

    connects: list[float]

    async def connect(self) -> None:
        self.connects.append(time.monotonic())
        await super().connect()


def test_plugin_opens_the_session_before_the_first_token_and_speaks(endpoint_server: Any) -> None:
    connects: list[float] = []
    first_delta: list[float] = []
    events: list[dict[str, Any]] = []
    lock = threading.Lock()

    def transport() -> TimedTransport:
        made = TimedTransport(endpoint_server.ws_url)
        made.connects = connects
        return made

    def own_handler(**kwargs: Any) -> None:
        if isinstance(kwargs.get("data"), str) and not first_delta:
            first_delta.append(time.monotonic())

    def on_event(event: dict[str, Any]) -> None:
        with lock:
            events.append(event)

    plugin = VoicePlugin(transport_factory=transport, on_event=on_event, silence_timeout=120)
    # The first token comes one pacing interval (1 s here) after the invocation starts.
    model = ScriptedModel(ANSWER, first_sentence_s=2.0, total_s=3.0)
    agent = Agent(model=model, callback_handler=own_handler, plugins=[plugin])
    try:
        assert isinstance(agent.callback_handler, CompositeCallbackHandler)  # the agent's own handler stays
        agent("What does the plan cost?")
        assert plugin.handler.wait(timeout=200), "speech did not finish"
    finally:
        plugin.handler.close()

    assert len(connects) == 1, "one TTS session per response"
    assert connects[0] < first_delta[0], "the session should open while the model is still thinking"
    kinds = [event["type"] for event in events]
    assert kinds[0] == "audio_start" and kinds[-1] == "audio_end" and "error" not in kinds
    done = [event for event in events if event["type"] == "sentence_complete"]
    assert [event["text"] for event in done] == [
        "Hi there!",
        "The plan costs $24.99 per month.",
        "You can cancel online.",
    ]


def test_plugin_alone_becomes_the_callback_handler() -> None:
    plugin = VoicePlugin("ws://127.0.0.1:9")
    agent = Agent(
        model=ScriptedModel("Hi.", first_sentence_s=0.01, total_s=0.01),
        callback_handler=None,
        plugins=[plugin],
    )
    try:
        assert agent.callback_handler is plugin.handler
    finally:
        plugin.handler.close()
