"""A stand-in LLM for conversation tests: it echoes every user message it was given.

Its answer shows what the agent remembers (``Heard: q1 / q2 / q3.``); a question starting ``hold`` keeps
it writing until the test opens ``gate`` (or cancels the agent), so an answer is still being written and
spoken while the test barges in.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterable
from typing import Any

from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec

from support.stand_in_model import StandInModel

#: Long enough that its echo is a first chunk the chunker releases at once (over 40 characters).
HOLD = "hold on, this question is long enough to be spoken at once"

#: Seconds a held answer goes on at most (a hang guard).
GUARD_S = 60.0


class HoldingEcho(StandInModel):
    """Answers ``Heard: <every user text>.`` word by word; a prompt starting ``hold`` then writes ``la``
    until ``gate`` opens, then ``TAIL`` (an answer still being written while the test acts)."""

    TAIL = "this tail is written only once the gate opens."

    def __init__(self) -> None:
        super().__init__("holding-echo")
        self.gate = threading.Event()
        self.streams_at_once = 0
        self.most_at_once = 0
        self.tail_written = False

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        users = [str(b["text"]) for m in messages if m["role"] == "user" for b in m["content"] if "text" in b]
        self.streams_at_once += 1
        self.most_at_once = max(self.most_at_once, self.streams_at_once)
        try:
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {}}}
            for word in ("Heard: " + " / ".join(users) + ". ").split(" "):
                yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
                await asyncio.sleep(0.005)
            if users[-1].startswith("hold"):
                # Still writing until the gate opens (a token every 20 ms, like a slow model), then TAIL.
                deadline = time.monotonic() + GUARD_S
                while not self.gate.is_set() and time.monotonic() < deadline:
                    yield {"contentBlockDelta": {"delta": {"text": "la "}}}
                    await asyncio.sleep(0.02)
                yield {"contentBlockDelta": {"delta": {"text": self.TAIL}}}
                self.tail_written = True
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        finally:
            self.streams_at_once -= 1
