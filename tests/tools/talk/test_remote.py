"""``RuntimeCall``: what a ``/ws`` socket sends becomes ``strands.bidi`` output events, as a local agent's
would be. A fake socket plays the app's side (its events in order, then the close)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from strands.bidi.types.events import BidiTranscriptBlockEvent
from strands_voice_tools.talk.remote import RuntimeCall

pytestmark = pytest.mark.timeout(30)


class FakeSocket:
    """The app's side of a call: answers ``start`` with the given events, then closes."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.sent: list[Any] = []
        self._events = events
        self._started = asyncio.Event()

    async def send(self, message: Any) -> None:
        self.sent.append(message)
        self._started.set()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self._started.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        await self._started.wait()
        for event in self._events:
            yield json.dumps(event)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []

    async def start(self, agent: Any) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def __call__(self, event: Any) -> None:
        self.events.append(event)


def test_a_final_that_is_no_turn_shows_no_caller_words() -> None:
    """A backchannel over the answer (``counts: false``) is no turn: as with a local agent, no transcript."""
    events = [
        {"type": "listening", "sample_rate": 16000},
        {"type": "transcript", "role": "user", "text": "What does it cost?", "final": True},
        {"type": "agent_start", "request_id": "r1"},
        {"type": "text_delta", "text": "Twenty dollars."},
        {"type": "transcript", "role": "user", "text": "Okay.", "final": False},
        {"type": "transcript", "role": "user", "text": "Okay.", "final": True, "counts": False},
        {"type": "agent_end", "request_id": "r1"},
    ]
    recorder = Recorder()

    async def call() -> None:
        runtime = RuntimeCall(FakeSocket(events), [], [recorder])
        await runtime.start({})
        await runtime.wait_closed()
        await runtime.close()

    asyncio.run(call())
    blocks = [(e.role, e.transcript) for e in recorder.events if isinstance(e, BidiTranscriptBlockEvent)]
    assert blocks == [("user", "What does it cost?"), ("assistant", "Twenty dollars.")]
