"""One voice handler reached twice through an agent's callback chain is called once per event.

A user may compose the handler into the agent's chain AND give it to ``VoicePlugin``, or run
``handler.stream`` on an agent whose plugin already holds it: the plugin and the attach path share one
rule (walk composites), so "Okay, noted." is spoken once, not "Okay, Okay, noted.noted.".
The TTS endpoint is in-memory (:mod:`instant_tts`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable
from typing import Any

import pytest
from strands import Agent
from strands.handlers.callback_handler import CompositeCallbackHandler, null_callback_handler
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from support.instant_tts import InstantTTS
from support.stand_in_model import StandInModel

from strands_voice.agent._callback_chain import joined, reaches
from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.agent._plugin import VoicePlugin

pytestmark = pytest.mark.timeout(60)

ANSWER = "Okay, noted."
GUARD_S = 30.0


class NotingModel(StandInModel):
    """Answers every prompt with ``ANSWER``, in two text deltas."""

    def __init__(self) -> None:
        super().__init__("noting")

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for token in ("Okay, ", "noted."):
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


class Voice:
    """A handler over in-memory endpoints, and what it sent them and emitted."""

    def __init__(self) -> None:
        self.endpoints: list[InstantTTS] = []
        self.events: list[dict[str, Any]] = []
        self.handler = VoiceCallbackHandler(transport_factory=self._endpoint, on_event=self.events.append)

    def _endpoint(self) -> InstantTTS:
        endpoint = InstantTTS()
        self.endpoints.append(endpoint)
        return endpoint

    @property
    def spoken(self) -> str:
        return " ".join(text for endpoint in self.endpoints for text in endpoint.synthesized)

    @property
    def completed(self) -> list[str]:
        return [event["text"] for event in self.events if event["type"] == "sentence_complete"]


@pytest.fixture
def voice() -> Any:
    made = Voice()
    yield made
    made.handler.close()


def test_the_rule_walks_nested_composites() -> None:
    def voice(**kwargs: Any) -> None:
        del kwargs

    def own(**kwargs: Any) -> None:
        del kwargs

    nested = CompositeCallbackHandler(own, CompositeCallbackHandler(null_callback_handler, voice))
    assert reaches(nested, voice) and not reaches(own, voice)
    assert joined(nested, voice) is nested
    assert joined(null_callback_handler, voice) is voice
    assert joined(None, voice) is voice
    composed = joined(own, voice)
    assert isinstance(composed, CompositeCallbackHandler) and composed.handlers == (own, voice)


def test_composite_first_then_the_plugin_speaks_once(voice: Voice) -> None:
    h = voice.handler
    agent = Agent(
        model=NotingModel(),
        callback_handler=CompositeCallbackHandler(null_callback_handler, h),
        plugins=[VoicePlugin(handler=h)],
    )
    agent("Note this.")
    assert h.wait(timeout=GUARD_S)
    assert voice.spoken == ANSWER
    assert " ".join(voice.completed) == ANSWER
    assert [event["type"] for event in voice.events].count("audio_end") == 1


def test_plugin_first_then_the_attach_of_stream_speaks_once(voice: Voice) -> None:
    h = voice.handler
    agent = Agent(
        model=NotingModel(), callback_handler=null_callback_handler, plugins=[VoicePlugin(handler=h)]
    )
    assert agent.callback_handler is h

    async def run() -> list[dict[str, Any]]:
        async with contextlib.aclosing(h.stream(agent, "Note this.")) as stream:
            return [event async for event in stream]

    events = asyncio.run(run())
    assert agent.callback_handler is h  # the attach added nothing, and left the chain as it was
    assert voice.spoken == ANSWER
    assert "".join(event["text"] for event in events if event["type"] == "text_delta") == ANSWER
    assert " ".join(e["text"] for e in events if e["type"] == "sentence_complete") == ANSWER


def test_composite_first_then_the_attach_of_stream_speaks_once(voice: Voice) -> None:
    h = voice.handler
    chain = CompositeCallbackHandler(null_callback_handler, h)
    agent = Agent(model=NotingModel(), callback_handler=chain)

    async def run() -> list[dict[str, Any]]:
        async with contextlib.aclosing(h.stream(agent, "Note this.")) as stream:
            return [event async for event in stream]

    events = asyncio.run(run())
    assert agent.callback_handler is chain
    assert voice.spoken == ANSWER
    assert " ".join(e["text"] for e in events if e["type"] == "sentence_complete") == ANSWER
