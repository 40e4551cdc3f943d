"""Helpers for the conversation store tests: the app served over real HTTP with an in-memory TTS endpoint,
one invocation read as events, and the conversation AgentCore Memory (moto) holds for a session."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
from agentcore_app.conversation._store import ConversationStore
from strands_voice_protocol.sse import SSEDecoder

from support.instant_tts import InstantTTS

#: Seconds any one wait in these tests may take before it is a failure (a hang guard, not a timing).
GUARD_S = 60.0
SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
#: The actor the app files every conversation under in AgentCore Memory.
ACTOR_ID = "voice-caller"
REGION = "us-east-1"


@contextlib.contextmanager
def served_app(model: Any, store: ConversationStore, **options: Any) -> Iterator[str]:
    """The example app (``model``, ``store``, the in-memory TTS endpoint unless ``transport_factory`` says
    otherwise) on a free port: its base URL."""
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    options.setdefault("transport_factory", InstantTTS)
    app = create_app(tts_url="ws://127.0.0.1:9", model=model, conversation_store=store, **options)
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield str(server.base_url)


def invoke(
    url: str,
    payload: dict[str, Any],
    session_id: str | None = None,
    on_event: Callable[..., Any] | None = None,
) -> list[dict[str, Any]]:
    """POST ``payload`` to ``/invocations`` and read the whole SSE answer (``on_event`` sees each event)."""
    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    headers = {} if session_id is None else {SESSION_HEADER: session_id}
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=GUARD_S)) as client,
        client.stream("POST", f"{url}/invocations", json=payload, headers=headers) as response,
    ):
        assert response.status_code == 200, response.read()
        for data in response.iter_raw():
            for event in decoder.feed(data):
                events.append(event.json())
                if on_event is not None:
                    on_event(events[-1])
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end", events
    return events


def ask(url: str, prompt: str, session_id: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """One question, read to its end."""
    return invoke(url, {"prompt": prompt}, session_id, **kwargs)


def text_of(events: list[dict[str, Any]]) -> str:
    """The answer's text, as streamed."""
    return "".join(e["text"] for e in events if e["type"] == "text_delta").strip()


def heard_of(events: list[dict[str, Any]]) -> str | None:
    """The ``interrupted`` event's heard text (None: the answer was not interrupted)."""
    return next((e["heard_text"] for e in events if e["type"] == "interrupted"), None)


def create_memory() -> str:
    """A new AgentCore Memory (moto must be serving): its id."""
    import boto3

    control = boto3.client("bedrock-agentcore-control", region_name=REGION)
    return str(control.create_memory(name="voice_conversations", eventExpiryDuration=30)["memory"]["id"])


def stored_messages(memory_id: str, session_id: str) -> list[tuple[str, str]]:
    """The conversation AgentCore Memory holds for ``session_id``: (role, text) per message, in order."""
    import boto3

    client = boto3.client("bedrock-agentcore", region_name=REGION)
    listing = client.list_events(
        memoryId=memory_id, actorId=ACTOR_ID, sessionId=session_id, includePayloads=True
    )
    messages: list[tuple[str, str]] = []
    for event in listing["events"]:
        for item in event["payload"]:
            if "conversational" in item:
                message = json.loads(item["conversational"]["content"]["text"])["message"]
                text = "".join(block.get("text", "") for block in message["content"])
                messages.append((message["role"], text.strip()))
    return messages
