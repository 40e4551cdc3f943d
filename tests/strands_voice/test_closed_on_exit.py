"""A ``with`` block closes the library's blocking objects however it ends (:class:`ClosedOnExit`)."""

from __future__ import annotations

import asyncio

import pytest
from strands_voice_protocol.events import Event

from strands_voice import VoiceCallbackHandler
from strands_voice._closing import ClosedOnExit


class _Held(ClosedOnExit):
    def __init__(self) -> None:
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


def test_the_block_gives_the_object_and_closes_it_once() -> None:
    with _Held() as held:
        assert held.closes == 0
    assert held.closes == 1


def test_an_error_in_the_block_still_closes_and_goes_on() -> None:
    held = _Held()
    with pytest.raises(RuntimeError, match="boom"), held:
        raise RuntimeError("boom")
    assert held.closes == 1


def test_a_with_block_closes_the_handler_and_ends_its_event_streams() -> None:
    async def scenario() -> list[Event]:
        with VoiceCallbackHandler("ws://127.0.0.1:9") as voice:  # never connects: nothing is spoken
            stream = voice.events()
        return [event async for event in stream]

    # The stream ends because the handler was closed (an open handler's stream would wait for events).
    assert asyncio.run(asyncio.wait_for(scenario(), 10.0)) == []
