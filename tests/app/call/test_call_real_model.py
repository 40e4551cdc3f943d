"""The spoken call with a real model's client: Strands' ``OpenAIModel`` streaming from a local
OpenAI-compatible server (the scripted stand-in's text and pacing), the real TTS endpoint, scripted
listening (a tone is the caller's voice).

A hosted model writes its whole answer within a second or two, long before it is spoken, so the agent
has sent its last sentence and ``close`` by the time the caller barges in: the barge-in must still stop
the speech, and the caller's question must be answered, with the heard part as the agent's memory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from support.call import Caller, scripted_listeners, silence, tone

pytestmark = pytest.mark.timeout(180)

ANSWER = (
    "The premium plan costs twenty five dollars a month. You can cancel it at any time without a fee. "
    "It includes unlimited storage for your photos and videos. Support is there day and night. "
    "You can use it offline on up to five devices. Most customers upgrade in their first week."
)


@pytest.fixture
def real_model_app(endpoint_server: Any) -> Iterator[tuple[str, Any]]:
    """``(ws_url, stand-in log)``: the app on ``OpenAIModel`` against the stand-in server."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server
    from strands.models.openai import OpenAIModel
    from strands_voice_tools.openai_stand_in import StandInLog, openai_stand_in_app

    log = StandInLog()
    llm = openai_stand_in_app(ScriptedModel(text=ANSWER, first_sentence_s=0.5, total_s=1.5), log)
    with running_server(llm) as model_server:
        model = OpenAIModel(
            client_args={"base_url": f"{model_server.base_url}/v1", "api_key": "not-a-key"},
            model_id="stand-in",
        )
        app = create_app(
            tts_url=endpoint_server.ws_url,
            model=model,
            conversation_store=ConversationStore(kind="none"),
            silence_timeout=120.0,
            listener_factory=scripted_listeners(["Stop please. What does it cost?"]),
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        with running_server(app) as server:
            yield server.base_url.replace("http://", "ws://") + "/ws", log


def test_a_barge_in_question_is_answered_and_the_heard_part_remembered(real_model_app: Any) -> None:
    url, log = real_model_app

    async def call() -> Caller:
        caller = await Caller.open(f"{url}?session_id=real-model-call-0123456789abcdef")
        await caller.send({"type": "start", "voice": "jm_kumo", "timestamps": True})
        await caller.wait_for("listening", within_s=30)
        await caller.send({"type": "prompt", "prompt": "Tell me about the premium plan."})
        while not caller.audio or log.requests[0].ended_at is None:
            await caller.speak(silence(0.1))  # the model has written everything: the agent sent close
        await caller.speak(silence(1.5))  # a second and more of the answer is heard
        await caller.speak(tone(1.2) + silence(1.0))  # the caller speaks over it
        while len(caller.of("agent_start")) < 2 or len(caller.of("agent_end")) < 2:
            await caller.speak(silence(0.1))
        await caller.close()
        return caller

    caller = asyncio.run(asyncio.wait_for(call(), 150))
    assert [e["type"] for e in caller.events if e["type"].startswith("speech_")][:2] == [
        "speech_paused",
        "speech_start",
    ]
    (interrupted,) = caller.of("interrupted")
    heard = interrupted["heard_text"]
    assert heard and heard != ANSWER and ANSWER.startswith(heard.rstrip(". ")[:20])
    assert not caller.of("error")  # no "busy": the first answer stopped at once
    assert len(log.requests) == 2 and log.questions[1] == "Stop please. What does it cost?"
    remembered = [m["content"] for m in log.requests[1].body["messages"] if m["role"] == "assistant"]
    assert len(remembered) == 1 and heard in str(remembered[0]) and ANSWER not in str(remembered[0])
