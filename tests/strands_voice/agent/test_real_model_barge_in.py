"""Barge-in with a real model's client: Strands' ``OpenAIModel`` against a local OpenAI-compatible server.

That model's tokens come over HTTP from a stream its client library owns, and it never looks at the
agent's cancel signal. :meth:`VoiceCallbackHandler.interrupt` must still end the handler's stream at once,
close the model's HTTP stream, and leave exactly the heard text as the agent's answer: while the model
pauses mid-answer (:class:`~support.openai_model.PausingModel`), and after it wrote the whole answer while
the audio is still owed (the endpoint, already told ``close``, reads no ``cancel``). The TTS endpoint is
in-memory (:mod:`instant_tts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import AsyncIterable
from typing import Any

import pytest
from strands import Agent
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from support.instant_tts import SECONDS_PER_REQUEST, InstantTTS
from support.openai_model import FIRST, TAIL, PausingModel, WritingModel, served_openai_model
from support.reliability import wait_for
from support.stand_in_model import StandInModel

from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.agent._model_cancel import CancellingModel

pytestmark = pytest.mark.timeout(120)

GUARD_S = 30.0  # hang guard of every wait


async def _interrupt_once_heard(voice: VoiceCallbackHandler, agent: Agent, before: Any = None) -> list[Any]:
    """Stream an answer; once its first sentence has played (``before()`` done), barge in; its events."""
    events: list[Any] = []
    async with contextlib.aclosing(voice.stream(agent, "Tell me about the plan.")) as stream:
        async for event in stream:
            events.append(event)
            if event["type"] == "sentence_complete" and event["sentence"] == 0:
                await asyncio.sleep(SECONDS_PER_REQUEST + 0.2)  # its audio has played by now
                if before is not None:
                    assert await asyncio.to_thread(before)
                assert voice.interrupt()
    return events


def _assert_heard_first_sentence(events: list[Any], agent: Agent) -> None:
    kinds = [event["type"] for event in events]
    assert kinds.count("interrupted") == 1 and kinds[-2:] == ["audio_end", "agent_end"]
    (interrupted,) = [event for event in events if event["type"] == "interrupted"]
    assert interrupted["heard_text"] == FIRST
    assert [message["role"] for message in agent.messages] == ["user", "assistant"]
    assert agent.messages[-1]["content"] == [{"text": FIRST}]


def test_interrupt_while_the_model_pauses_stops_its_http_stream(caplog: pytest.LogCaptureFixture) -> None:
    model = PausingModel()
    try:
        with served_openai_model(model) as (openai, log):
            agent = Agent(model=openai, callback_handler=None)
            voice = VoiceCallbackHandler(transport_factory=InstantTTS)
            try:
                events = asyncio.run(asyncio.wait_for(_interrupt_once_heard(voice, agent), GUARD_S))
            finally:
                voice.close()
            # The model's HTTP stream was closed by the client, not left for the garbage collector.
            assert wait_for(lambda: log.requests[0].dropped, GUARD_S)
            assert len(log.requests) == 1 and not log.requests[0].finished
    finally:
        model.resume.set()  # an unstopped pause must not hold the server's shutdown
    _assert_heard_first_sentence(events, agent)
    assert TAIL not in "".join(event.get("text", "") for event in events)
    closing_errors = [record for record in caplog.records if record.name == "asyncio"]
    assert not closing_errors, [record.getMessage() for record in closing_errors]


def test_interrupt_after_the_model_wrote_it_all_ends_the_owed_audio() -> None:
    release = threading.Event()  # the endpoint holds the second sentence's audio
    model = WritingModel()
    try:
        with served_openai_model(model) as (openai, log):
            agent = Agent(model=openai, callback_handler=None)
            voice = VoiceCallbackHandler(
                transport_factory=functools.partial(InstantTTS, answer_first=1, release=release)
            )
            written = functools.partial(wait_for, lambda: log.requests and log.requests[0].finished, GUARD_S)
            try:
                events = asyncio.run(asyncio.wait_for(_interrupt_once_heard(voice, agent, written), GUARD_S))
            finally:
                voice.close()
    finally:
        release.set()
    _assert_heard_first_sentence(events, agent)


class FailingModel(StandInModel):
    """Writes a few words, then fails as a broken model server does."""

    def __init__(self) -> None:
        super().__init__("failing")

    async def stream(
        self, messages: Messages, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        yield {"contentBlockDelta": {"delta": {"text": "Half an "}}}
        raise RuntimeError("the model server went away")


def test_a_model_error_still_reaches_the_agent() -> None:
    agent = Agent(model=FailingModel(), callback_handler=None)
    voice = VoiceCallbackHandler(transport_factory=InstantTTS)

    async def main() -> list[Any]:
        async with contextlib.aclosing(voice.stream(agent, "Hello?")) as stream:
            return [event async for event in stream]

    try:
        events = asyncio.run(asyncio.wait_for(main(), GUARD_S))
    finally:
        voice.close()
    assert [event["code"] for event in events if event["type"] == "error"] == ["agent_error"]
    assert events[-1]["type"] == "agent_end"


class StructuredModel(FailingModel):
    """A model with structured output of its own (as Bedrock's and Anthropic's are)."""

    _supports_structured_output = True


def test_the_wrapped_model_keeps_its_own_attributes() -> None:
    model = StructuredModel()
    wrapped = CancellingModel(model)
    assert wrapped._supports_structured_output is True  # not hidden by a Model base class default
    assert wrapped.config is model.config and wrapped.get_config() == {"model_id": "failing"}
