"""A call ends when any of its tasks ends: a caller whose socket breaks while an answer is speaking frees
the call's listener and the conversation (its next turn is not ``busy``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from support.call import START, scripted_listeners
from support.conversation_model import HoldingEcho
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.timeout(60)


class BreakingSocket:
    """A caller's WebSocket: ``start`` and a prompt in, then silence; sending fails after ``sends`` frames
    (the connection broke), and nothing more is received (the caller's side hangs)."""

    def __init__(self, sends: int) -> None:
        self.sends = sends
        self.sent = 0
        self.closed: int | None = None
        self.application_state: Any = None
        self.query_params: dict[str, str] = {}
        self.headers: dict[str, str] = {}
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        for text in (json.dumps(START), json.dumps({"type": "prompt", "prompt": "hold the line"})):
            self._inbox.put_nowait({"type": "websocket.receive", "text": text})

    async def accept(self) -> None:
        return None

    async def receive(self) -> dict[str, Any]:
        return await self._inbox.get()  # after the prompt: never again

    async def _send(self) -> None:
        self.sent += 1
        if self.sent > self.sends:
            raise OSError("the connection broke")

    async def send_text(self, text: str) -> None:
        await self._send()

    async def send_bytes(self, data: bytes) -> None:
        await self._send()

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed = code


def test_a_broken_socket_ends_the_call_and_frees_its_conversation() -> None:
    from agentcore_app.answering import Answering
    from agentcore_app.call import Call, CallLimits
    from agentcore_app.conversation import Conversations, ConversationStore
    from strands import Agent

    model = HoldingEcho()  # "hold ...": it writes until its gate opens (an answer still going)

    async def run() -> list[str]:
        conversations = Conversations(
            ConversationStore(kind="none"),
            lambda **kw: Agent(model=model, callback_handler=None, **kw),
            takeover_s=2.0,
        )
        answering = Answering(conversations, "ws://127.0.0.1:9", 30.0, InstantTTS)
        socket = BreakingSocket(sends=5)
        call = Call(
            socket, "broken-call-0123456789abcdef", answering, scripted_listeners(["x"]), CallLimits()
        )
        await asyncio.wait_for(call.run(), 30)  # the old call waited on its receive loop for ever
        model.gate.set()
        events: list[str] = []
        voice = answering.new_handler()
        from agentcore_app.payload import VoiceRequest

        from strands_voice import VoiceOptions

        async for event in answering.answer(
            VoiceRequest("next", VoiceOptions()), None, "broken-call-0123456789abcdef", voice
        ):
            events.append(event["type"])
        return events

    events = asyncio.run(run())
    assert "error" not in events and events[-1] == "agent_end"  # the conversation was free again
