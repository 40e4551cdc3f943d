"""The run's shared event queue is bounded: a slow consumer slows the run down instead of buffering it.

Narrow unit tests of ``run_voice``'s flow control against an in-memory stand-in of a Leg 1 endpoint that
answers every request at once with many audio frames (far faster than any consumer). The real endpoint
is covered by test_voice_modes.py and the reliability suite.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from strands import Agent
from strands_voice_protocol.audio import BYTES_PER_SECOND

from strands_voice.agent._run_voice import run_voice
from strands_voice.speech._options import VoiceOptions
from strands_voice.transports._base import Frame

pytestmark = pytest.mark.timeout(60)

ANSWER = (
    "The first sentence is long enough to be spoken on its own. The second one follows it. "
    "A third sentence keeps going. And the fourth one ends the answer."
)
FRAMES_PER_REQUEST = 60
FRAME_BYTES = 4_800  # 0.1 s of pcm16
MAX_EVENTS = 8


class InstantEndpoint:
    """A FrameTransport whose 'endpoint' answers each synthesize at once with ``frames`` audio frames.

    Records how many audio frames the client has pulled (``delivered``) and whether it was closed.
    """

    def __init__(self, frames: int = FRAMES_PER_REQUEST) -> None:
        self.frames = frames
        self.delivered = 0
        self.requests = 0
        self.closed = False
        self._incoming: asyncio.Queue[Frame | None] = asyncio.Queue()

    async def connect(self) -> None:
        return None

    async def send(self, message: str) -> None:
        decoded = json.loads(message)
        if decoded.get("type") == "close":
            self._incoming.put_nowait(None)
            return
        rid = decoded["request_id"]
        self.requests += 1
        start = {"type": "synthesis_start", "request_id": rid, "format": "pcm16"}
        self._incoming.put_nowait(json.dumps({**start, "sample_rate": 24_000, "channels": 1}))
        for index in range(self.frames):
            self._incoming.put_nowait(bytes([index % 200 + 1]) * FRAME_BYTES)
        total = self.frames * FRAME_BYTES
        complete = {"type": "synthesis_complete", "request_id": rid, "audio_bytes": total}
        self._incoming.put_nowait(
            json.dumps({**complete, "total_duration_s": total / BYTES_PER_SECOND, "elapsed_s": 0.0})
        )

    async def receive(self) -> Frame:
        frame = await self._incoming.get()
        if frame is None:
            raise EOFError
        if isinstance(frame, bytes):
            self.delivered += 1
        return frame

    async def close(self) -> None:
        self.closed = True


def _agent() -> Agent:
    return Agent(model=ScriptedModel(text=ANSWER, first_sentence_s=0.05, total_s=0.3), callback_handler=None)


def _run(endpoint: InstantEndpoint, mode: str = "bidi") -> Any:
    return run_voice(
        _agent(),
        "Go.",
        options=VoiceOptions(mode=mode),  # type: ignore[arg-type]
        transport_factory=lambda: endpoint,
        max_queued_events=MAX_EVENTS,
    )


@pytest.mark.parametrize("mode", ["bidi", "batch"])
def test_voice_slow_consumer_gets_every_event_in_order_with_bounded_read_ahead(mode: str) -> None:
    endpoint = InstantEndpoint()

    async def main() -> tuple[list[dict[str, Any]], int]:
        events: list[dict[str, Any]] = []
        read_ahead = 0
        async with contextlib.aclosing(_run(endpoint, mode)) as stream:
            async for event in stream:
                events.append(event)
                consumed_audio = sum(1 for e in events if e["type"] == "audio_chunk")
                # Audio frames pulled from the endpoint but not yet handed to this consumer.
                read_ahead = max(read_ahead, endpoint.delivered - consumed_audio)
                await asyncio.sleep(0.002)  # a slow reader (e.g. a caller on a slow network)
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return events, read_ahead

    events, read_ahead = asyncio.run(asyncio.wait_for(main(), 50))
    expected_requests = endpoint.requests
    assert expected_requests >= 1
    # Bounded: the run held at most the queue's worth of audio (plus the one session event in hand),
    # not the whole answer's (60 frames per request).
    assert read_ahead <= MAX_EVENTS + 2, read_ahead
    assert endpoint.delivered == expected_requests * FRAMES_PER_REQUEST
    # Everything arrived, in order.
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert "error" not in kinds
    deltas = [e for e in events if e["type"] == "text_delta"]
    assert "".join(e["text"] for e in deltas) == ANSWER
    assert [e["seq"] for e in deltas] == list(range(len(deltas)))
    audio = [e for e in events if e["type"] == "audio_chunk"]
    assert [e["seq"] for e in audio] == list(range(len(audio)))
    pcm = b"".join(base64.b64decode(e["data"]) for e in audio)
    assert len(pcm) == expected_requests * FRAMES_PER_REQUEST * FRAME_BYTES
    # The frames of each request in the order sent (the first byte counts up per frame).
    firsts = [base64.b64decode(e["data"])[0] for e in audio]
    assert firsts == [index % 200 + 1 for index in range(FRAMES_PER_REQUEST)] * expected_requests
    sentences = [e["sentence"] for e in events if e["type"] == "sentence_complete"]
    assert sentences == list(range(expected_requests))
    assert kinds.index("audio_end") < len(kinds) - 1
    times = [e["t_ms"] for e in events]
    assert times == sorted(times)


def test_voice_consumer_that_stops_reading_then_closes_ends_the_run() -> None:
    endpoint = InstantEndpoint()

    async def main() -> int:
        stream = _run(endpoint)
        async for event in stream:
            if event["type"] == "audio_chunk":
                break
        # The consumer stops reading: the run fills its queue and waits, pulling nothing more. Wait until
        # the pulling has stopped (however slow the machine), then check it stays stopped.
        pulled_while_stalled = await _settled(lambda: endpoint.delivered)
        await asyncio.sleep(0.5)
        assert endpoint.delivered == pulled_while_stalled, "audio kept being pulled for a stalled reader"
        # Closing while the queue is full (both tasks waiting for room) must not hang.
        async with asyncio.timeout(10):
            await stream.aclose()
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return pulled_while_stalled

    pulled = asyncio.run(asyncio.wait_for(main(), 50))
    assert pulled <= MAX_EVENTS + 3, pulled
    assert endpoint.closed


async def _settled(read: Callable[[], int], quiet_s: float = 0.5, limit_s: float = 60.0) -> int:
    """Wait until ``read()`` has not changed for ``quiet_s``; return its value."""
    deadline = asyncio.get_running_loop().time() + limit_s
    value = read()
    while True:
        await asyncio.sleep(quiet_s)
        if read() == value:
            return value
        assert asyncio.get_running_loop().time() < deadline, "the value never settled"
        value = read()
