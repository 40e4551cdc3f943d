"""Agents that use tools: the text before a tool call is heard while the tool runs, turns never share a
chunk, tool results are never spoken, and one TTS session serves the whole invocation."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterable, Iterator
from typing import Any

import pytest
from agentcore_app.scripted import split_tokens
from strands import Agent, tool
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.audio import BYTES_PER_SECOND
from support.stand_in_model import StandInModel

from strands_voice.agent._handler import VoiceCallbackHandler, ends_model_step
from strands_voice.speech._options import VoiceOptions
from strands_voice.transports._base import Frame

pytestmark = pytest.mark.timeout(240)

PREAMBLE = "Let me check the weather for you"  # no final period: only the tool call ends it
ANSWER = "It is sunny and 22 degrees in Paris today."
TOOL_RESULT = "TOOL-RESULT sunny 22C"

#: The shared CPU can synthesize several times slower than real time while other suites run.
SILENCE_S = 120.0


class WeatherModel(StandInModel):
    """A stand-in LLM: says ``PREAMBLE``, calls ``get_weather``, and with its result says ``ANSWER``."""

    def __init__(self) -> None:
        super().__init__("weather")

    async def _text(self, text: str) -> AsyncIterable[StreamEvent]:
        yield {"contentBlockStart": {"start": {}}}
        for token in split_tokens(text):
            await asyncio.sleep(0.01)
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        yield {"contentBlockStop": {}}

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        has_result = any("toolResult" in block for message in messages for block in message["content"])
        yield {"messageStart": {"role": "assistant"}}
        if has_result:
            async for event in self._text(ANSWER):
                yield event
            yield {"messageStop": {"stopReason": "end_turn"}}
            return
        async for event in self._text(PREAMBLE):
            yield event
        yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t-1", "name": "get_weather"}}}}
        yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"city": "Paris"})}}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use"}}


class SlowTool:
    """``get_weather``: waits until the test releases it (at most ``limit_s``), then idles ``extra_s``,
    then waits for ``then_wait`` (if given)."""

    def __init__(
        self, limit_s: float = 120.0, extra_s: float = 0.0, then_wait: threading.Event | None = None
    ) -> None:
        self.release = threading.Event()
        self.then_wait = then_wait
        self.waited_in_time: bool | None = None
        self.started = threading.Event()
        self.finished = threading.Event()
        self.released_in_time: bool | None = None
        self.extra_s = extra_s
        self.limit_s = limit_s

        @tool
        def get_weather(city: str) -> str:
            """Look up the weather of a city (slowly).

            Args:
                city: The city.
            """
            self.started.set()
            self.released_in_time = self.release.wait(self.limit_s)
            time.sleep(self.extra_s)  # a tool that keeps running while the TTS session is idle
            if self.then_wait is not None:
                self.waited_in_time = self.then_wait.wait(self.limit_s)
            self.finished.set()
            return f"{TOOL_RESULT} in {city}"

        self.tool = get_weather


def run_stream(voice: VoiceCallbackHandler, agent: Agent, on_event: Any = None, **kwargs: Any) -> Any:
    async def main() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        async with contextlib.aclosing(voice.stream(agent, "Weather in Paris?", **kwargs)) as stream:
            async for event in stream:
                events.append(event)
                if on_event is not None:
                    on_event(event)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return events

    return asyncio.run(asyncio.wait_for(main(), 200))


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def test_the_text_before_a_tool_call_is_heard_while_the_tool_runs(
    endpoint_server: Any, recording: Any
) -> None:
    factory = recording(endpoint_server.ws_url)
    slow = SlowTool()
    voice = VoiceCallbackHandler(transport_factory=factory, silence_timeout=SILENCE_S)
    agent = Agent(model=WeatherModel(), tools=[slow.tool], callback_handler=voice)
    heard_during_tool: list[bool] = []

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "sentence_complete" and event["sentence"] == 0:
            # The first turn has been heard in full; the tool is still waiting for this release.
            heard_during_tool.append(not slow.finished.is_set())
            slow.release.set()

    events = run_stream(voice, agent, on_event)
    voice.close()
    assert slow.released_in_time is True, "nothing was heard until the tool gave up waiting"
    assert heard_during_tool == [True]
    assert "error" not in [e["type"] for e in events]
    assert "".join(e["text"] for e in of_type(events, "text_delta")) == PREAMBLE + ANSWER
    # The two model steps are two chunks, never one; the tool's result is never spoken.
    done = of_type(events, "sentence_complete")
    assert [(e["sentence"], e["text"]) for e in done] == [(0, PREAMBLE), (1, ANSWER)]
    (transport,) = factory.made  # ONE session for the whole invocation
    assert transport.synthesized == [PREAMBLE, ANSWER]
    assert not [text for text in transport.synthesized if "TOOL-RESULT" in text]
    assert [m["type"] for m in transport.sent] == ["synthesize", "synthesize", "close"]
    assert {e["sentence"] for e in of_type(events, "audio_chunk")} == {0, 1}


def test_batch_speaks_each_turn_as_its_own_request(endpoint_server: Any, recording: Any) -> None:
    factory = recording(endpoint_server.ws_url)
    slow = SlowTool()
    slow.release.set()
    voice = VoiceCallbackHandler(transport_factory=factory, silence_timeout=SILENCE_S)
    agent = Agent(model=WeatherModel(), tools=[slow.tool], callback_handler=voice)
    events = run_stream(voice, agent, options=VoiceOptions(mode="batch"))
    voice.close()
    assert events[0]["mode"] == "batch" and "error" not in [e["type"] for e in events]
    (transport,) = factory.made
    assert transport.synthesized == [PREAMBLE, ANSWER]
    assert of_type(events, "audio_chunk")[0]["t_ms"] > of_type(events, "text_delta")[-1]["t_ms"]


class InstantTTS:
    """A Leg 1 stand-in transport: answers each synthesize at once with 0.1 s of audio."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self._incoming: asyncio.Queue[Frame | None] = asyncio.Queue()

    async def connect(self) -> None:
        return None

    async def send(self, message: str) -> None:
        decoded = json.loads(message)
        self.sent.append(decoded)
        if decoded["type"] == "close":
            self._incoming.put_nowait(None)
            return
        rid = decoded["request_id"]
        pcm = b"\x01\x00" * (BYTES_PER_SECOND // 20)
        for frame in (
            {
                "type": "synthesis_start",
                "request_id": rid,
                "format": "pcm16",
                "sample_rate": 24000,
                "channels": 1,
            },
            pcm,
            {
                "type": "synthesis_complete",
                "request_id": rid,
                "audio_bytes": len(pcm),
                "total_duration_s": 0.1,
            },
        ):
            self._incoming.put_nowait(
                frame if isinstance(frame, bytes) else json.dumps({**frame, "elapsed_s": 0})
            )

    async def receive(self) -> Frame:
        frame = await self._incoming.get()
        if frame is None:
            raise EOFError
        return frame

    async def close(self) -> None:
        return None


def test_a_tool_that_outlasts_the_silence_timeout_does_not_trip_it() -> None:
    made: list[InstantTTS] = []
    silence_s = 0.3
    slow = SlowTool(extra_s=silence_s * 5)  # the session is idle (nothing owed) all that time

    def factory() -> InstantTTS:
        made.append(InstantTTS())
        return made[-1]

    voice = VoiceCallbackHandler(transport_factory=factory, silence_timeout=silence_s)
    agent = Agent(model=WeatherModel(), tools=[slow.tool], callback_handler=voice)

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "sentence_complete":
            slow.release.set()

    events = run_stream(voice, agent, on_event)
    voice.close()
    assert slow.released_in_time is True
    assert not of_type(events, "error"), of_type(events, "error")
    assert [e["text"] for e in of_type(events, "sentence_complete")] == [PREAMBLE, ANSWER]
    (transport,) = made
    assert [m["type"] for m in transport.sent] == ["synthesize", "synthesize", "close"]


@pytest.fixture(scope="module")
def idle_closing_endpoint(onnx_engine: Any) -> Iterator[Any]:
    """A second REAL endpoint (same engine) that closes a session idle for 1 s."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    with running_server(create_app(engine=onnx_engine, settings=Settings(idle_timeout_s=1.0))) as server:
        yield server


def test_a_tool_that_outlasts_the_endpoint_idle_timeout_gets_a_new_session(
    idle_closing_endpoint: Any,
) -> None:
    from strands_voice.transports._websocket import WebSocketTransport

    closed_by_endpoint = threading.Event()

    class Watched(WebSocketTransport):
        """The real transport; records the texts sent, and notes when the endpoint closed the session."""

        def __init__(self, url: str) -> None:
            super().__init__(url)
            self.sent: list[dict[str, Any]] = []
            self.connects = 0

        async def connect(self) -> None:
            self.connects += 1
            await super().connect()

        async def send(self, message: str) -> None:
            self.sent.append(json.loads(message))
            await super().send(message)

        async def receive(self) -> Frame:
            try:
                return await super().receive()
            except EOFError:
                closed_by_endpoint.set()
                raise

        @property
        def synthesized(self) -> list[str]:
            return [m["text"] for m in self.sent if m["type"] == "synthesize"]

    made: list[Watched] = []

    def factory() -> Watched:
        made.append(Watched(idle_closing_endpoint.ws_url))
        return made[-1]

    # The tool runs until the endpoint has closed the idle session (its idle timeout, 1 s here).
    slow = SlowTool(then_wait=closed_by_endpoint)
    voice = VoiceCallbackHandler(transport_factory=factory, silence_timeout=SILENCE_S)
    agent = Agent(model=WeatherModel(), tools=[slow.tool], callback_handler=voice)

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "sentence_complete":
            slow.release.set()

    events = run_stream(voice, agent, on_event)
    voice.close()
    assert slow.released_in_time is True and slow.waited_in_time is True
    assert not of_type(events, "error"), of_type(events, "error")
    assert [e["text"] for e in of_type(events, "sentence_complete")] == [PREAMBLE, ANSWER]
    # The session was closed by the endpoint while idle; the answer after the tool went out on a new
    # connection: the session reconnects its transport, or the speaker opens a new session.
    # (On a very loaded machine the endpoint may also close the first connection before the first words.)
    assert [text for transport in made for text in transport.synthesized] == [PREAMBLE, ANSWER]
    assert sum(transport.connects for transport in made) >= 2
    assert [m["type"] for m in made[-1].sent][-2:] == ["synthesize", "close"]


def test_the_agent_call_form_flushes_at_the_tool_call_too(endpoint_server: Any, recording: Any) -> None:
    factory = recording(endpoint_server.ws_url)
    slow = SlowTool()
    events: list[dict[str, Any]] = []

    def on_event(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "sentence_complete":
            slow.release.set()

    voice = VoiceCallbackHandler(transport_factory=factory, silence_timeout=SILENCE_S, on_event=on_event)
    agent = Agent(model=WeatherModel(), tools=[slow.tool], callback_handler=voice)
    agent("Weather in Paris?")
    assert voice.wait(timeout=200)
    voice.close()
    assert slow.released_in_time is True
    assert [e["text"] for e in of_type(events, "sentence_complete")] == [PREAMBLE, ANSWER]
    (transport,) = factory.made
    assert transport.synthesized == [PREAMBLE, ANSWER]


@pytest.mark.parametrize(
    ("kwargs", "ends"),
    [
        ({"data": "Hi", "delta": {"text": "Hi"}}, False),
        ({"event": {"contentBlockStart": {"start": {"toolUse": {"name": "x", "toolUseId": "1"}}}}}, True),
        ({"event": {"contentBlockStart": {"start": {}}}}, False),
        ({"event": {"messageStop": {"stopReason": "tool_use"}}}, True),
        ({"type": "tool_use_stream", "current_tool_use": {"name": "x"}, "delta": {}}, True),
        ({"message": {"role": "assistant", "content": []}}, True),
        ({"reasoningText": "hmm", "reasoning": True}, False),
    ],
)
def test_ends_model_step(kwargs: dict[str, Any], ends: bool) -> None:
    assert ends_model_step(kwargs) is ends
