"""The conversation store's settings (``CONVERSATION_*``) and the in-memory life of conversations: idle
ones leave memory, not the store; the window bounds the history."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agentcore_app.conversation._conversations import Conversations
from agentcore_app.conversation._store import (
    DEFAULT_CONVERSATION_DIR,
    ConversationStore,
    InvalidSessionIdError,
)
from strands import Agent
from strands_voice_protocol.errors import ConfigurationError
from support.conversation_model import HoldingEcho

from strands_voice.agent._handler import VoiceCallbackHandler

SESSION = "conversation-store-test-0123456789abcdef"


def test_store_settings_from_the_environment(tmp_path: Path) -> None:
    default = ConversationStore.from_env({})
    assert (default.kind, default.directory) == ("file", DEFAULT_CONVERSATION_DIR)
    assert default.prefix == "conversations/"
    assert (default.window, default.idle_s) == (40, 900.0)
    custom = ConversationStore.from_env(
        {"CONVERSATION_DIR": str(tmp_path), "CONVERSATION_WINDOW": "6", "CONVERSATION_IDLE_S": "30"}
    )
    assert (custom.directory, custom.window, custom.idle_s) == (tmp_path, 6, 30.0)
    memory_env = {"CONVERSATION_STORE": "agentcore-memory", "AGENTCORE_MEMORY_ID": "m1"}
    memory = ConversationStore.from_env(memory_env)
    assert memory.memory_id == "m1"
    assert ConversationStore.from_env({"CONVERSATION_STORE": "none"}).session_manager(SESSION) is None


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"CONVERSATION_STORE": "redis"}, "CONVERSATION_STORE"),
        ({"CONVERSATION_STORE": "s3"}, "CONVERSATION_BUCKET"),
        ({"CONVERSATION_STORE": "agentcore-memory"}, "AGENTCORE_MEMORY_ID"),
        ({"CONVERSATION_WINDOW": "many"}, "CONVERSATION_WINDOW"),
        ({"CONVERSATION_IDLE_S": "-1"}, "CONVERSATION_IDLE_S"),
    ],
)
def test_bad_store_settings_name_the_variable(env: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigurationError, match=names):
        ConversationStore.from_env(env)


def test_a_hostile_id_never_reaches_a_session_manager(tmp_path: Path) -> None:
    with pytest.raises(InvalidSessionIdError):
        ConversationStore(directory=tmp_path).session_manager("../outside")
    assert list(tmp_path.iterdir()) == []


def test_idle_conversations_leave_memory_not_the_store_and_the_window_bounds_history(tmp_path: Path) -> None:
    now = [0.0]
    store = ConversationStore(directory=tmp_path, window=4, idle_s=60.0)

    def make_agent(**conversation: Any) -> Agent:
        return Agent(model=HoldingEcho(), callback_handler=None, **conversation)

    conversations = Conversations(store, make_agent, clock=lambda: now[0])
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/unused")

    async def turn(prompt: str) -> tuple[str, int]:
        async with conversations.agent_for_answer(SESSION, voice) as agent:
            answer = str(await agent.invoke_async(prompt)).strip()
            return answer, len(agent.messages)

    assert asyncio.run(turn("one")) == ("Heard: one.", 2)
    assert asyncio.run(turn("two")) == ("Heard: one / two.", 4)
    assert len(conversations) == 1
    now[0] += 61.0  # idle longer than CONVERSATION_IDLE_S: the next look-up drops it from memory
    assert asyncio.run(turn("three")) == ("Heard: one / two / three.", 4)  # reloaded; the window keeps 4
    assert len(conversations) == 1
    conversations._evict_idle()
    assert len(conversations) == 1  # just used
    now[0] += 61.0
    conversations._evict_idle()
    assert len(conversations) == 0
    voice.close()
