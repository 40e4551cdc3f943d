"""Rewriting a finished answer's memory stores it on a thread: a slow store stalls no loop.

Two callers are served on ONE event loop (as the AgentCore app serves them). Caller A barges in after
its agent finished writing: the heard text replaces the answer, and the agent's session manager stores
the rewrite, here through a store that blocks until the test releases it. Caller B, on the same loop,
must still get its first audio while A's store is blocked; then A's store completes, and A's next turn
is stored after the rewrite. The TTS endpoint is in-memory (:mod:`instant_tts`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

import pytest
from strands import Agent
from strands.hooks import AfterInvocationEvent
from strands.session.file_session_manager import FileSessionManager
from strands.types.content import Message, Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from support.instant_tts import InstantTTS
from support.stand_in_model import StandInModel

from strands_voice.agent._handler import VoiceCallbackHandler

pytestmark = pytest.mark.timeout(60)

GUARD_S = 20.0


class SaysModel(StandInModel):
    """Answers every prompt with ``text``, one delta a word."""

    def __init__(self, text: str) -> None:
        super().__init__("says")
        self.text = text

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for word in self.text.split(" "):
            yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


class SlowStore(FileSessionManager):
    """A file store whose rewrite of the latest message waits for ``release`` (at most ``GUARD_S``)."""

    def __init__(self, release: threading.Event, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.released_in_time: bool | None = None

    def redact_latest_message(self, redact_message: Message, agent: Any, **kwargs: Any) -> None:
        self.released_in_time = self.release.wait(GUARD_S)
        super().redact_latest_message(redact_message, agent, **kwargs)


def sentence_chunker() -> IncrementalSentenceChunker:
    return IncrementalSentenceChunker(first_chunk_min_chars=None)


async def _barge_in_after_the_answer(
    voice: VoiceCallbackHandler, agent: Agent, finished: asyncio.Event
) -> None:
    """Caller A: once its agent has finished and the first sentence was delivered, barge in."""
    async with contextlib.aclosing(voice.stream(agent, "Talk.")) as stream:
        async for event in stream:
            if event["type"] == "sentence_complete" and event["sentence"] == 0:
                await asyncio.wait_for(finished.wait(), GUARD_S)
                assert voice.interrupt()  # the rewrite's store write starts here, and blocks


async def _first_audio(voice: VoiceCallbackHandler, agent: Agent, release: threading.Event) -> bool:
    """Caller B: its first audio chunk arrives (while A's store is blocked), then A's store is released."""
    got_audio = False
    async with contextlib.aclosing(voice.stream(agent, "Hello?")) as stream:
        async for event in stream:
            if event["type"] == "audio_chunk" and not got_audio:
                got_audio = True
                release.set()
    return got_audio


def test_a_slow_store_does_not_delay_another_callers_first_audio(tmp_path: Path) -> None:
    release = threading.Event()
    store = SlowStore(release, session_id="caller-a", storage_dir=str(tmp_path))
    agent_a = Agent(model=SaysModel("One sentence here. Two sentence here."), session_manager=store)
    agent_b = Agent(model=SaysModel("Hello there."), callback_handler=None)
    held = threading.Event()  # A's second sentence is never answered: its speech is still under way
    voice_a = VoiceCallbackHandler(
        transport_factory=functools.partial(InstantTTS, answer_first=1, release=held),
        chunker_factory=sentence_chunker,
        max_queued_events=10_000,
    )
    voice_b = VoiceCallbackHandler(transport_factory=InstantTTS)

    async def main() -> bool:
        finished = asyncio.Event()
        agent_a.hooks.add_callback(AfterInvocationEvent, lambda _event: finished.set())
        a = asyncio.create_task(_barge_in_after_the_answer(voice_a, agent_a, finished))
        await asyncio.wait_for(finished.wait(), GUARD_S)
        while not voice_a.speaking or "Two" in agent_a.messages[-1]["content"][0]["text"]:
            await asyncio.sleep(0.01)  # A has barged in: its answer is rewritten, its store write blocked
            assert not a.done()
        got_audio = await asyncio.wait_for(_first_audio(voice_b, agent_b, release), GUARD_S)
        held.set()
        await asyncio.wait_for(a, GUARD_S)
        return got_audio

    try:
        assert asyncio.run(main())
    finally:
        voice_a.close()
        voice_b.close()
    assert store.released_in_time, "caller B's audio waited for caller A's store"
    reloaded = FileSessionManager(session_id="caller-a", storage_dir=str(tmp_path))
    again = Agent(model=SaysModel("Next."), session_manager=reloaded, callback_handler=None)
    assert [m["role"] for m in again.messages] == ["user", "assistant"]
    heard = agent_a.messages[-1]["content"]
    assert "Two" not in heard[0]["text"] and again.messages[-1]["content"] == heard
