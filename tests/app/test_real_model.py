"""``POST /invocations`` with a real model's client: the app's agent on Strands' ``OpenAIModel``, against a
local OpenAI-compatible streaming server (:mod:`support.openai_model`), over real HTTP.

A caller who hangs up mid-answer, and a new question on a session still speaking, must stop the answer
(and the model's HTTP stream) whatever the model; the next turn is answered, and the model is given
exactly the heard part as the previous answer (the server's request log says what it was asked). Each in
two states of the answer: the model paused mid-answer, and the answer written in full while its audio is
still owed. The TTS endpoint is in-memory (:mod:`instant_tts`): these tests are about the app.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from strands_voice_protocol.sse import SSEDecoder
from strands_voice_tools.openai_stand_in import StandInLog, strands_messages
from support.instant_tts import SECONDS_PER_REQUEST
from support.openai_model import FIRST, PAUSED, SHORT, STATES, WRITTEN, app_on_openai_model
from support.reliability import wait_for

pytestmark = pytest.mark.timeout(120)

GUARD_S = 60.0  # hang guard of every wait
SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
SESSION = "real-model-session-0123456789abcdef"
QUESTION = "What is the Premium plan?"
NEXT = "What does it cost?"


class Served:
    """The app on a free port, its agent on ``OpenAIModel`` (its model in ``state``), the model's log."""

    def __init__(self, base_url: str, state: str, log: StandInLog) -> None:
        self.base_url = base_url
        self.state = state
        self.log = log

    def heard_first_sentence(self, event: dict[str, Any]) -> bool:
        """Whether the caller, having just got ``event``, has heard the first sentence (then waits no more).

        In the "written" state the model has also written the whole answer by then (its second sentence's
        audio is still owed: the endpoint holds it).
        """
        if event["type"] != "sentence_complete" or event["sentence"] != 0:
            return False
        time.sleep(SECONDS_PER_REQUEST + 0.3)  # its audio plays
        if self.state == WRITTEN:
            assert wait_for(lambda: self.log.requests[0].finished, GUARD_S)
        return True


@pytest.fixture
def serve() -> Iterator[Callable[[str], Served]]:
    """``serve(state) -> Served``: the app on a free port, its model in ``state`` (one of ``STATES``)."""
    with contextlib.ExitStack() as stack:

        def start(state: str) -> Served:
            base_url, log = stack.enter_context(app_on_openai_model(state))
            return Served(base_url, state, log)

        yield start


def post(
    served: Served, prompt: str, on_event: Callable[[dict[str, Any]], bool] | None = None
) -> list[dict[str, Any]]:
    """POST ``prompt`` on the session and read its events; hang up once ``on_event(event)`` is True."""
    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    headers = {SESSION_HEADER: SESSION}
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=GUARD_S)) as client,
        client.stream(
            "POST", f"{served.base_url}/invocations", json={"prompt": prompt}, headers=headers
        ) as got,
    ):
        assert got.status_code == 200
        for data in got.iter_raw():
            for event in decoder.feed(data):
                events.append(event.json())
                if on_event is not None and on_event(events[-1]):
                    return events  # the connection closes here: the caller hangs up
    return events


def assert_answered_after_the_heard_part(served: Served, second: list[dict[str, Any]]) -> None:
    """The next turn was answered by the model, asked with the heard part as the previous answer."""
    kinds = [event["type"] for event in second]
    assert "error" not in kinds and kinds[-2:] == ["audio_end", "agent_end"], second
    assert "".join(event["text"] for event in second if event["type"] == "text_delta").strip() == SHORT
    assert len(served.log.requests) == 2  # the model was asked again
    assert strands_messages(served.log.requests[1].body["messages"]) == [
        {"role": "user", "content": [{"text": QUESTION}]},
        {"role": "assistant", "content": [{"text": FIRST}]},
        {"role": "user", "content": [{"text": NEXT}]},
    ]
    if served.state == PAUSED:  # the paused answer's HTTP stream was closed by the app's client
        assert wait_for(lambda: served.log.requests[0].dropped, GUARD_S)


@pytest.mark.parametrize("state", STATES)
def test_a_hang_up_mid_answer_leaves_the_heard_part_for_the_next_turn(
    serve: Callable[[str], Served], state: str
) -> None:
    served = serve(state)
    first = post(served, QUESTION, on_event=served.heard_first_sentence)
    assert first[-1]["type"] == "sentence_complete"  # the caller hung up there
    assert_answered_after_the_heard_part(served, post(served, NEXT))


@pytest.mark.parametrize("state", STATES)
def test_a_new_question_on_a_speaking_session_interrupts_the_answer_and_is_answered(
    serve: Callable[[str], Served], state: str
) -> None:
    served = serve(state)
    first: list[dict[str, Any]] = []
    heard = threading.Event()

    def on_event(event: dict[str, Any]) -> bool:
        if served.heard_first_sentence(event):
            heard.set()
        return False  # the caller reads on, to the end of the first answer

    reader = threading.Thread(target=lambda: first.extend(post(served, QUESTION, on_event=on_event)))
    reader.start()
    assert heard.wait(GUARD_S)
    second = post(served, NEXT)
    reader.join(GUARD_S)
    assert not reader.is_alive()
    kinds = [event["type"] for event in first]
    assert kinds.count("interrupted") == 1 and kinds[-2:] == ["audio_end", "agent_end"], kinds
    assert next(event for event in first if event["type"] == "interrupted")["heard_text"] == FIRST
    assert_answered_after_the_heard_part(served, second)
