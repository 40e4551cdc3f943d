"""A call's answer audio goes out no further ahead of the caller's playback than the lead: the next chunk is
not even taken from the answer while the caller has more than that still to play (a pause then holds it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from types import SimpleNamespace

from agentcore_app.call._answers import AUDIO_LEAD_S, _send
from agentcore_app.call._outbox import Outbox
from strands_voice_protocol.events import Event, EventBuilder


class PlayingVoice:
    """The answer's handler as pacing reads it: how much sent audio the caller has yet to play."""

    def __init__(self) -> None:
        self.unplayed = 0.0

    def unplayed_ms(self) -> float | None:
        return self.unplayed


def test_the_next_chunk_waits_until_the_caller_is_within_the_lead() -> None:
    builder = EventBuilder()
    pulled: list[int] = []

    async def answer() -> AsyncGenerator[Event, None]:
        for seq in range(3):
            pulled.append(seq)
            yield builder.audio_chunk(seq=seq, sentence=0, data=b"\x00\x00")
        yield builder.audio_end(chunks=3, duration_s=0.0)

    async def run() -> list[object]:
        voice, outbox = PlayingVoice(), Outbox(100)
        voice.unplayed = (AUDIO_LEAD_S + 1.0) * 1000.0  # the caller has more than the lead to play
        call = SimpleNamespace(outbox=outbox, clock=SimpleNamespace(now=lambda: 0.0))
        sending = asyncio.create_task(_send(call, answer(), voice, lambda: None))  # type: ignore[arg-type]
        assert await outbox.get() == b"\x00\x00"
        await asyncio.sleep(0.2)
        assert pulled == [0]  # the second chunk is not taken while the caller is that far behind
        voice.unplayed = AUDIO_LEAD_S * 1000.0
        assert await asyncio.wait_for(sending, 10) == (0.0, False)
        return [await outbox.get() for _ in range(3)]

    frames = asyncio.run(run())
    assert pulled == [0, 1, 2] and frames[:2] == [b"\x00\x00", b"\x00\x00"]
