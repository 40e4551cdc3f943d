"""Barge-in stops the agent and leaves in its memory exactly what the caller heard.

A stand-in model counts the tokens Strands asks it for after the cancel; the agent's last assistant
message must equal the ``interrupted`` event's ``heard_text``, whether the model was still writing or had
already finished; a session manager must persist the rewrite. The TTS endpoint is in-memory
(:mod:`instant_tts`): these tests are about the agent side.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import AsyncIterable
from pathlib import Path
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel, split_tokens
from strands import Agent, tool
from strands.hooks import AfterInvocationEvent
from strands.session.file_session_manager import FileSessionManager
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.events import EventBuilder
from support.instant_tts import SECONDS_PER_REQUEST, InstantTTS
from support.stand_in_model import StandInModel

from strands_voice.agent._answer_memory import NOTHING_HEARD, _rewrite_messages, remembered_text
from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.agent._plugin import VoicePlugin
from strands_voice.speech._heard import DeliveryLog

pytestmark = pytest.mark.timeout(60)

FIRST = "One sentence here. Two sentence here. "
REST_TOKENS = 400  # far more than a cancelled stream may ask for
GUARD_S = 30.0  # hang guard of every wait


class CountingModel(StandInModel):
    """Streams ``FIRST``, waits for ``hold``, then ``REST_TOKENS`` tokens (or a tool call when ``tool``).

    ``after_cancel`` counts the tokens Strands asked for once ``cancelled`` was set.
    """

    def __init__(self, *, hold: bool, tool: bool = False) -> None:
        super().__init__("counting")
        self.hold = threading.Event()
        if not hold:
            self.hold.set()
        self.cancelled = threading.Event()
        self.after_cancel = 0
        self.wrote_all = False
        self.tool = tool

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        for token in split_tokens(FIRST):
            yield {"contentBlockDelta": {"delta": {"text": token}}}
        assert await asyncio.to_thread(self.hold.wait, GUARD_S)
        if self.tool:
            if self.cancelled.is_set():
                self.after_cancel += 1
            yield {"contentBlockStop": {}}
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "t-1", "name": "lookup"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": "{}"}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            self.wrote_all = True
            return
        for n in range(REST_TOKENS):
            if self.cancelled.is_set():
                self.after_cancel += 1
            yield {"contentBlockDelta": {"delta": {"text": f"Word{n}. "}}}
            await asyncio.sleep(0)
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}
        self.wrote_all = True


def first_sentence_chunker() -> IncrementalSentenceChunker:
    return IncrementalSentenceChunker(first_chunk_min_chars=None)


def last_text(agent: Agent) -> Any:
    message = agent.messages[-1]
    assert message["role"] == "assistant"
    return message["content"]


def test_nothing_heard_is_remembered_as_an_ellipsis_not_a_blank_message() -> None:
    assert remembered_text("") == remembered_text("  ") == NOTHING_HEARD == "…"
    assert remembered_text("Hi.") == "Hi."


def test_an_answer_stopped_by_force_is_appended_so_turns_alternate(tmp_path: Path) -> None:
    sessions = FileSessionManager(session_id="caller-3", storage_dir=str(tmp_path))
    agent = Agent(model=CountingModel(hold=False), session_manager=sessions, callback_handler=None)
    agent("Talk.")
    agent.messages.append({"role": "user", "content": [{"text": "Again."}]})
    sessions.append_message(agent.messages[-1], agent)  # as Strands stores a prompt; its task then died
    write = _rewrite_messages(agent, "Heard this.")
    assert write is not None
    write()  # the session store's write, which AnswerMemory runs on a thread of its own
    assert _rewrite_messages(agent, "Heard this.") is None  # already so
    reloaded = Agent(
        model=CountingModel(hold=False),
        session_manager=FileSessionManager(session_id="caller-3", storage_dir=str(tmp_path)),
    )
    assert [m["role"] for m in reloaded.messages] == ["user", "assistant", "user", "assistant"]
    assert reloaded.messages[-1]["content"] == [{"text": "Heard this."}]


def test_played_not_sent_decides_what_was_heard() -> None:
    now = [100.0]
    log = DeliveryLog(lambda seq: 12_000, clock=lambda: now[0])  # 0.25 s a chunk
    builder = EventBuilder()
    for seq, sentence in enumerate([0, 0, 1, 1]):  # everything delivered at once: 1 s of audio
        log.delivered(builder.audio_chunk(seq=seq, sentence=sentence, data=b"x"))
        if seq % 2:
            log.delivered(builder.sentence_complete(sentence=sentence, text=f"S{sentence}.", duration_s=0.5))
    assert log.interrupted_fields() == {"heard_text": "", "sentences_done": [], "sentence_cut": 0}
    now[0] += 0.6  # 0.6 s played: the first sentence, and the start of the second
    assert log.interrupted_fields() == {"heard_text": "S0.", "sentences_done": [0], "sentence_cut": 1}
    now[0] += 5.0  # playback stops at the end of what was delivered
    assert log.played_s == 1.0
    assert log.interrupted_fields()["heard_text"] == "S0. S1."


def test_stream_barge_in_while_writing_cancels_the_model_and_keeps_what_was_heard(tmp_path: Path) -> None:
    model = CountingModel(hold=True)
    sessions = FileSessionManager(session_id="caller-1", storage_dir=str(tmp_path))
    agent = Agent(model=model, session_manager=sessions, callback_handler=None)
    voice = VoiceCallbackHandler(transport_factory=InstantTTS, chunker_factory=first_sentence_chunker)

    async def main() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        async with contextlib.aclosing(voice.stream(agent, "Talk.")) as stream:
            async for event in stream:
                events.append(event)
                if event["type"] == "sentence_complete" and event["sentence"] == 0:
                    await asyncio.sleep(SECONDS_PER_REQUEST + 0.1)  # its audio has played by now
                    assert voice.interrupt()
                    model.cancelled.set()
                    model.hold.set()
        return events

    events = asyncio.run(asyncio.wait_for(main(), GUARD_S))
    voice.close()
    (interrupted,) = [e for e in events if e["type"] == "interrupted"]
    assert interrupted["heard_text"] == "One sentence here."
    assert model.after_cancel <= 1 and not model.wrote_all
    assert last_text(agent) == [{"text": "One sentence here."}]
    reloaded = Agent(
        model=model, session_manager=FileSessionManager(session_id="caller-1", storage_dir=str(tmp_path))
    )
    assert reloaded.messages[-1]["content"] == [{"text": "One sentence here."}]


def test_stream_barge_in_after_the_model_finished_rewrites_the_answer(tmp_path: Path) -> None:
    model = CountingModel(hold=False)
    agent = Agent(
        model=model,
        session_manager=FileSessionManager(session_id="caller-2", storage_dir=str(tmp_path)),
        callback_handler=None,
    )
    finished = threading.Event()
    agent.hooks.add_callback(AfterInvocationEvent, lambda _event: finished.set())
    # Room for the whole text: the agent finishes while the consumer is still at the first sentence,
    # and the endpoint holds the second sentence's audio back: the answer is still being spoken.
    release = threading.Event()
    voice = VoiceCallbackHandler(
        transport_factory=functools.partial(InstantTTS, answer_first=1, release=release),
        chunker_factory=first_sentence_chunker,
        max_queued_events=10_000,
    )

    async def main() -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        async with contextlib.aclosing(voice.stream(agent, "Talk.")) as stream:
            async for event in stream:
                events.append(event)
                if event["type"] == "sentence_complete" and event["sentence"] == 0:
                    assert await asyncio.to_thread(finished.wait, GUARD_S)
                    assert model.wrote_all and len(last_text(agent)[0]["text"]) > 1000
                    await asyncio.sleep(SECONDS_PER_REQUEST + 0.1)
                    assert voice.interrupt()
                    release.set()
        return events

    events = asyncio.run(asyncio.wait_for(main(), GUARD_S))
    voice.close()
    (interrupted,) = [e for e in events if e["type"] == "interrupted"]
    assert interrupted["heard_text"] == "One sentence here."
    assert last_text(agent) == [{"text": "One sentence here."}]
    reloaded = Agent(
        model=model, session_manager=FileSessionManager(session_id="caller-2", storage_dir=str(tmp_path))
    )
    assert [m["role"] for m in reloaded.messages] == ["user", "assistant"]
    assert reloaded.messages[-1]["content"] == [{"text": "One sentence here."}]


def _barge_in_from_another_thread(model: CountingModel, voice: VoiceCallbackHandler) -> threading.Event:
    """On the first sentence's ``sentence_complete``: wait till it played, interrupt, release the model."""
    heard = threading.Event()

    def barge_in() -> None:
        time.sleep(SECONDS_PER_REQUEST + 0.1)
        assert voice.interrupt()
        assert heard.wait(GUARD_S)  # the interrupt (and the agent's cancel) happened on the worker loop
        model.cancelled.set()
        model.hold.set()

    def on_event(event: Any) -> None:
        if event["type"] == "sentence_complete" and event["sentence"] == 0:
            threading.Thread(target=barge_in, daemon=True).start()
        if event["type"] == "interrupted":
            voice.heard = event["heard_text"]  # type: ignore[attr-defined]
            heard.set()

    voice.on_event = on_event
    return heard


def test_plugin_barge_in_cancels_the_agent() -> None:
    model = CountingModel(hold=True)
    plugin = VoicePlugin(transport_factory=InstantTTS, chunker_factory=first_sentence_chunker)
    agent = Agent(model=model, plugins=[plugin])
    heard = _barge_in_from_another_thread(model, plugin.handler)
    result = agent("Talk.")
    assert plugin.handler.wait(GUARD_S)
    plugin.handler.close()
    assert heard.is_set() and result.stop_reason == "cancelled"
    assert model.after_cancel <= 1 and not model.wrote_all
    assert last_text(agent) == [{"text": plugin.handler.heard}] == [{"text": "One sentence here."}]  # type: ignore[attr-defined]


def test_barge_in_before_a_tool_call_runs_no_tool() -> None:
    calls: list[str] = []

    @tool
    def lookup() -> str:
        """Look something up."""
        calls.append("lookup")
        return "found"

    model = CountingModel(hold=True, tool=True)
    voice = VoiceCallbackHandler(transport_factory=InstantTTS, chunker_factory=first_sentence_chunker)
    agent = Agent(model=model, tools=[lookup], callback_handler=voice)
    _barge_in_from_another_thread(model, voice)
    result = agent("Look it up.")
    assert voice.wait(GUARD_S)
    voice.close()
    assert result.stop_reason == "cancelled" and calls == []
    assert last_text(agent) == [{"text": voice.heard}] == [{"text": "One sentence here."}]  # type: ignore[attr-defined]


def test_an_agent_answered_by_many_handlers_keeps_one_pair_of_hooks() -> None:
    """The app makes a handler per answer on a session's long-lived agent: its hooks must not pile up."""
    from strands.hooks import AfterInvocationEvent, BeforeInvocationEvent

    from strands_voice.agent._answer_memory import AnswerMemories

    agent = Agent(model=ScriptedModel(first_sentence_s=0.01, total_s=0.02), callback_handler=None)

    def hooks() -> int:
        registry: Any = agent.hooks
        kinds = (AfterInvocationEvent, BeforeInvocationEvent)
        return sum(len(registry._registered_callbacks.get(kind, [])) for kind in kinds)

    before = hooks()
    memories = [AnswerMemories() for _ in range(5)]
    for handler_memories in memories:
        handler_memories.bind(agent)
    assert hooks() - before == 2  # one pair, however many handlers
