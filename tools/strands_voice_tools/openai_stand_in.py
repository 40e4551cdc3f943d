"""The scripted stand-in LLM behind a real model's client: an OpenAI-compatible chat completions server.

A voice agent's answer path behaves differently with a real model than with a ``Model`` object in the
same process: the model's tokens come over HTTP, a barge-in has to stop a stream that a client library
owns, and nothing hears the agent's ``cancel_signal``. :func:`openai_stand_in_app` serves a
:class:`~agentcore_app.scripted.ScriptedModel` (its text and its pacing: the first sentence after
``first_sentence_s``) as ``POST /v1/chat/completions`` with ``stream: true`` (Server-Sent Events of
``chat.completion.chunk`` objects), so Strands' ``OpenAIModel`` (and any other OpenAI client) talks to
it as to a hosted model. Every request is kept in :class:`StandInLog`, with whether its stream was read
to the end or dropped by the client (a stopped answer).

Example::

    app = openai_stand_in_app(ScriptedModel(first_sentence_s=0.5))
    with running_server(app) as server:
        model = OpenAIModel(client_args={"base_url": f"{server.base_url}/v1", "api_key": "x"},
                            model_id="stand-in")
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Final

from agentcore_app.scripted import ScriptedModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from strands.types.content import Message, Messages

__all__ = ["STAND_IN_MODEL_ID", "StandInLog", "StandInRequest", "openai_stand_in_app", "strands_messages"]

#: The model id the server reports (any id is accepted in requests).
STAND_IN_MODEL_ID: Final = "stand-in"


@dataclass
class StandInRequest:
    """One chat completion asked of the server.

    Attributes:
        body: The request's JSON body.
        client_port: The client's TCP port (requests on one kept connection share it).
        finished: The whole answer was streamed.
        dropped: The client stopped reading before the end (a barge-in closed the stream).
        ended_at: ``time.monotonic()`` when the stream ended either way (None: still streaming).
    """

    body: dict[str, Any]
    client_port: int | None = None
    finished: bool = False
    dropped: bool = False
    ended_at: float | None = None

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (what the model was asked)."""
        for message in reversed(strands_messages(self.body.get("messages", []))):
            if message["role"] == "user":
                return " ".join(str(block.get("text", "")) for block in message["content"]).strip()
        return ""


@dataclass
class StandInLog:
    """Every request the server was asked, in order."""

    requests: list[StandInRequest] = field(default_factory=list)

    @property
    def questions(self) -> list[str]:
        """What each request asked (its last user message's text)."""
        return [request.last_user_text for request in self.requests]


def _text_of(content: Any) -> str:
    """An OpenAI message's content (a string or a list of parts) as plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def strands_messages(openai_messages: list[dict[str, Any]]) -> Messages:
    """The user and assistant turns of an OpenAI ``messages`` list as Strands messages (text only)."""
    out: Messages = []
    for message in openai_messages:
        role = message.get("role")
        text = _text_of(message.get("content")).strip()
        if role in ("user", "assistant") and text:
            turn: Message = {"role": role, "content": [{"text": text}]}
            out.append(turn)
    return out


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "stand-in", "object": "chat.completion.chunk", "created": 0, "model": STAND_IN_MODEL_ID}
    return f"data: {json.dumps({**body, 'choices': [choice]})}\n\n"


async def _answer(model: ScriptedModel, request: StandInRequest) -> AsyncIterator[str]:
    """The scripted answer as chat completion chunks, at the model's pacing."""
    try:
        yield _chunk({"role": "assistant", "content": ""})
        async for event in model.stream(strands_messages(request.body.get("messages", []))):
            text = event.get("contentBlockDelta", {}).get("delta", {}).get("text")
            if text:
                yield _chunk({"content": text})
        yield _chunk({}, "stop")
        yield "data: [DONE]\n\n"
        request.finished = True
    except (asyncio.CancelledError, GeneratorExit):
        request.dropped = True
        raise
    finally:
        request.ended_at = time.monotonic()


def openai_stand_in_app(model: ScriptedModel, log: StandInLog | None = None) -> Starlette:
    """An OpenAI-compatible server streaming ``model``'s scripted answers (see the module docstring).

    Args:
        model: The stand-in whose text and pacing are served (its ``script_for`` sees the conversation).
        log: Where the requests are kept (a fresh one when None; reachable as ``app.state.log``).
    """
    requests = log if log is not None else StandInLog()

    async def completions(http: Request) -> Response:
        body = await http.json()
        if not isinstance(body, dict) or not body.get("stream"):
            error = {"error": {"message": "this stand-in streams only: send stream=true", "type": "invalid"}}
            return JSONResponse(error, status_code=400)
        request = StandInRequest(body, client_port=http.client.port if http.client else None)
        requests.requests.append(request)
        return StreamingResponse(_answer(model, request), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.log = requests
    return app
