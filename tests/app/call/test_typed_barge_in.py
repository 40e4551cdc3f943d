"""``WS /ws`` with a real model's client: a call's barge-in stops the answer whatever the model.

The app's agent is on Strands' ``OpenAIModel`` against a local OpenAI-compatible streaming server
(:mod:`support.openai_model`); the caller types its turns (``prompt`` frames) and barges in with
``interrupt``, while the model pauses mid-answer or after it wrote the whole answer with its audio still
owed. The second question must be answered (no ``busy``), the model asked again with exactly the heard part
as the previous answer. The TTS endpoint is in-memory (:mod:`instant_tts`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from strands_voice_tools.openai_stand_in import StandInLog, strands_messages
from support.call import Caller, scripted_listeners
from support.instant_tts import SECONDS_PER_REQUEST
from support.openai_model import FIRST, PAUSED, SHORT, STATES, app_on_openai_model
from support.reliability import wait_for

pytestmark = pytest.mark.timeout(120)

GUARD_S = 60.0  # hang guard of every wait
SESSION = "call-real-model-0123456789abcdef0123"
QUESTION = "What is the Premium plan?"
NEXT = "What does it cost?"


@pytest.fixture(params=STATES)
def call_url(request: pytest.FixtureRequest) -> Iterator[tuple[str, StandInLog, bool]]:
    """``(ws_url, log, paused)``: the app on a free port, its model paused mid-answer or done writing."""
    with app_on_openai_model(request.param, listener_factory=scripted_listeners(["unused"])) as (base, log):
        yield base.replace("http://", "ws://") + f"/ws?session_id={SESSION}", log, request.param == PAUSED


def test_a_typed_barge_in_stops_the_answer_and_the_next_question_is_answered(
    call_url: tuple[str, StandInLog, bool],
) -> None:
    url, log, paused = call_url

    async def call() -> Caller:
        caller = await Caller.listening(url)
        await caller.send({"type": "prompt", "prompt": QUESTION})
        await caller.wait_for("sentence_complete", within_s=GUARD_S)
        await asyncio.sleep(SECONDS_PER_REQUEST + 0.3)  # the caller hears the first sentence
        if not paused:
            assert await asyncio.to_thread(wait_for, lambda: log.requests[0].finished, GUARD_S)
        await caller.send({"type": "interrupt"})
        await caller.send({"type": "prompt", "prompt": NEXT})
        await caller.wait_for("agent_end", 2, within_s=GUARD_S)
        await caller.close()
        return caller

    caller = asyncio.run(call())
    assert not caller.of("error"), caller.of("error")
    (interrupted,) = caller.of("interrupted")
    assert interrupted["heard_text"] == FIRST
    second = caller.of("agent_start")[1]["request_id"]
    start = next(i for i, e in enumerate(caller.events) if e.get("request_id") == second)
    assert "".join(e["text"] for e in caller.events[start:] if e["type"] == "text_delta").strip() == SHORT
    assert len(log.requests) == 2  # the model was asked again
    assert strands_messages(log.requests[1].body["messages"]) == [
        {"role": "user", "content": [{"text": QUESTION}]},
        {"role": "assistant", "content": [{"text": FIRST}]},
        {"role": "user", "content": [{"text": NEXT}]},
    ]
    if paused:  # the paused answer's HTTP stream was closed by the app's client
        assert wait_for(lambda: log.requests[0].dropped, GUARD_S)
