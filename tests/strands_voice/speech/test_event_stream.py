"""One event stream out of the handler: ``on_audio``, ``on_event``, ``events()`` and ``stream()`` read the
same events in the same order (an in-memory endpoint: fast and deterministic)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from strands import Agent
from support.instant_tts import InstantTTS

from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech._options import VoiceOptions

pytestmark = pytest.mark.timeout(60)

GUARD_S = 30.0  # hang guard of every wait
ANSWER = "Sure, here is the plan. It costs ten dollars a month. You can cancel at any time."


def _agent(callback_handler: Any = None) -> Agent:
    model = ScriptedModel(text=ANSWER, first_sentence_s=0.05, total_s=0.2)
    return Agent(model=model, callback_handler=callback_handler)


def _audio(events: list[dict[str, Any]]) -> bytes:
    return b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "audio_chunk")


def test_every_view_of_a_stream_run_sees_what_it_yields() -> None:
    heard: list[bytes] = []
    called: list[dict[str, Any]] = []
    voice = VoiceCallbackHandler(transport_factory=InstantTTS, on_audio=heard.append, on_event=called.append)

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        subscribed = voice.events()
        yielded: list[dict[str, Any]] = []
        async with contextlib.aclosing(voice.stream(_agent(), "Plan?")) as stream:
            async for event in stream:
                yielded.append(event)
        voice.close()  # ends the events() view
        return yielded, [event async for event in subscribed]

    yielded, seen = asyncio.run(asyncio.wait_for(main(), GUARD_S))
    kinds = [e["type"] for e in yielded]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end" and "text_delta" in kinds
    assert kinds.count("sentence_complete") == 3 and "error" not in kinds
    assert called == yielded
    assert seen == yielded
    assert b"".join(heard) == _audio(yielded) != b""


def test_every_view_of_a_callback_run_sees_the_same_events() -> None:
    heard: list[bytes] = []
    called: list[dict[str, Any]] = []
    voice = VoiceCallbackHandler(
        transport_factory=InstantTTS,
        options=VoiceOptions(mode="batch"),
        on_audio=heard.append,
        on_event=called.append,
    )

    async def main() -> list[dict[str, Any]]:
        subscribed = voice.events(until_audio_end=True)
        await asyncio.to_thread(_agent(voice), "Plan?")
        return [event async for event in subscribed]

    seen = asyncio.run(asyncio.wait_for(main(), GUARD_S))
    assert voice.wait(GUARD_S)
    voice.close()
    kinds = [e["type"] for e in seen]
    assert kinds[0] == "audio_start" and kinds[-1] == "audio_end" and "error" not in kinds
    assert kinds.count("sentence_complete") == 1  # batch: the whole answer in one request
    assert called == seen
    assert b"".join(heard) == _audio(seen) != b""
