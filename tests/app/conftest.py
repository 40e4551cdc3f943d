"""Fixtures for the example AgentCore app: the app served over real HTTP next to the real TTS endpoint."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterable, Iterator
from typing import Any

import httpx
import pytest
from agentcore_app.scripted import ScriptedModel
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from support.stand_in_model import StandInModel

# Two sentences: bidi speaks them as two chunks (the first is over the chunker's 40-character minimum).
# The shared 2-core machine can be slow to synthesize; don't let the client give up on the endpoint.
SILENCE_S = 120.0

SHORT_ANSWER = "Here is the first sentence of a short answer. And here is the second one."


class EchoModel(StandInModel):
    """A stand-in LLM that answers with every user message it was given, to expose conversation leaks.

    It streams ``Heard: <user text 1> / <user text 2> ...`` word by word with short sleeps.
    """

    def __init__(self) -> None:
        super().__init__("echo")

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        heard = [
            str(block["text"])
            for message in messages
            if message["role"] == "user"
            for block in message["content"]
            if "text" in block
        ]
        answer = "Heard: " + " / ".join(heard) + "."
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for word in answer.split(" "):
            await asyncio.sleep(0.02)
            yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def fast_scripted_model(text: str = SHORT_ANSWER) -> ScriptedModel:
    """The scripted stand-in with fast pacing (the whole answer in half a second)."""
    return ScriptedModel(text=text, first_sentence_s=0.15, total_s=0.5)


def _invoke(
    base_url: str,
    payload: Any,
    *,
    chunks: list[bytes] | None = None,
    session_id: str | None = None,
    on_event: Any = None,
) -> tuple[int, list[dict[str, Any]]]:
    """POST ``payload`` (JSON, or raw body bytes) to ``/invocations``; read the SSE stream incrementally.

    ``session_id`` goes in the AgentCore session header; ``on_event(event)`` sees each event as it comes.

    Returns:
        The status code and the events (for a non-200 answer: the JSON body as the only item).
    """
    from strands_voice_protocol.sse import SSEDecoder

    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=120.0)) as client,
        client.stream(
            "POST",
            f"{base_url}/invocations",
            **({"content": payload} if isinstance(payload, bytes) else {"json": payload}),
            headers={
                "Content-Type": "application/json",  # raw bytes too: the app takes JSON only
                **({} if session_id is None else {"X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session_id}),
            },
        ) as response,
    ):
        if response.status_code != 200:
            response.read()
            return response.status_code, [response.json()]
        assert response.headers["content-type"].startswith("text/event-stream")
        for data in response.iter_raw():
            if chunks is not None:
                chunks.append(data)
            for event in decoder.feed(data):
                events.append(event.json())
                if on_event is not None:
                    on_event(events[-1])
        events.extend(event.json() for event in decoder.flush())
    return 200, events


@pytest.fixture
def invoke() -> Any:
    """``invoke(base_url, payload, chunks=None) -> (status, events)``: one invocation over real HTTP/SSE."""
    return _invoke


@pytest.fixture
def short_answer() -> str:
    """The text the scripted app streams."""
    return SHORT_ANSWER


def _quiet_agentcore_log() -> None:
    # BedrockAgentCoreApp's constructor sets its logger to INFO with a JSON handler: one line per request.
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)


@pytest.fixture(scope="module")
def scripted_app_url(endpoint_server: Any) -> Iterator[str]:
    """The example app (fast scripted model, real TTS endpoint) on 127.0.0.1:<free port>."""
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(tts_url=endpoint_server.ws_url, model=fast_scripted_model(), silence_timeout=SILENCE_S)
    _quiet_agentcore_log()
    with running_server(app) as server:
        yield server.base_url


@pytest.fixture(scope="module")
def echo_app_url(endpoint_server: Any) -> Iterator[str]:
    """The example app with :class:`EchoModel`, to check that no conversation carries over."""
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(tts_url=endpoint_server.ws_url, model=EchoModel(), silence_timeout=SILENCE_S)
    _quiet_agentcore_log()
    with running_server(app) as server:
        yield server.base_url
