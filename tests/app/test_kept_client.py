"""The app's OpenAI model keeps its client open between requests (``agentcore_app.kept_client``), against the
local OpenAI-compatible streaming server, which notes each request's client port: requests on one kept
connection share it; Strands' own ``OpenAIModel`` opens a connection per request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from agentcore_app.kept_client import KeptClientOpenAIModel
from agentcore_app.models import create_model
from agentcore_app.scripted import ScriptedModel
from strands.models.openai import OpenAIModel
from strands_voice_tools.openai_stand_in import STAND_IN_MODEL_ID, StandInLog
from support.openai_model import NOT_A_KEY, served_stand_in

pytestmark = pytest.mark.timeout(60)

ANSWER = "Okay. Noted."
QUESTION: Any = [{"role": "user", "content": [{"text": "What does the premium plan cost?"}]}]


@dataclass
class Served:
    """The stand-in on a free port: its client arguments, its model and its request log."""

    client_args: dict[str, str]
    model: ScriptedModel
    log: StandInLog

    def ports(self) -> list[int | None]:
        """Each request's client port, in order."""
        return [request.client_port for request in self.log.requests]


@pytest.fixture
def served() -> Iterator[Served]:
    """A stand-in answering "Okay. Noted." in a tenth of a second."""
    model = ScriptedModel(text=ANSWER, first_sentence_s=0.05, total_s=0.1)
    with served_stand_in(model) as (base_url, log):
        yield Served({"base_url": base_url, "api_key": NOT_A_KEY}, model, log)


async def answer(model: OpenAIModel) -> str:
    """One request's whole text."""
    text = ""
    async for event in model.stream(QUESTION):
        text += event.get("contentBlockDelta", {}).get("delta", {}).get("text", "")
    return text


def kept_model(served: Served) -> KeptClientOpenAIModel:
    return KeptClientOpenAIModel(client_args=served.client_args, model_id=STAND_IN_MODEL_ID)


def test_the_app_makes_its_openai_model_with_a_kept_client() -> None:
    model = create_model("openai:gpt-4o-mini?base_url=http://127.0.0.1:9/v1")
    assert isinstance(model, KeptClientOpenAIModel)


def test_a_client_of_its_own_is_refused() -> None:
    with pytest.raises(ValueError, match="client_args"):
        KeptClientOpenAIModel(client=object(), model_id=STAND_IN_MODEL_ID)


def test_answers_on_one_loop_share_one_connection(served: Served) -> None:
    kept = kept_model(served)

    async def three() -> list[str]:
        try:
            return [await answer(kept) for _ in range(3)]
        finally:
            await kept.aclose()

    assert asyncio.run(three()) == [ANSWER] * 3
    assert len(set(served.ports())) == 1
    # Strands' own model, for contrast: a client, and so a connection, per request.
    plain = OpenAIModel(client_args=served.client_args, model_id=STAND_IN_MODEL_ID)

    async def two() -> list[str]:
        return [await answer(plain) for _ in range(2)]

    assert asyncio.run(two()) == [ANSWER] * 2
    assert len(set(served.ports()[3:])) == 2


def test_a_dropped_answer_stops_the_model_stream_at_once(served: Served) -> None:
    served.model.update_config(total_s=60.0)  # still streaming when it is dropped
    kept = kept_model(served)

    async def drop_after_first_words() -> None:
        try:
            stream = kept.stream(QUESTION)
            async for event in stream:
                if "contentBlockDelta" in event:
                    break
            await stream.aclose()  # what a cancelled answer does to the model's generator
            deadline = time.monotonic() + 10.0
            while not served.log.requests[0].dropped:
                assert time.monotonic() < deadline, "the server still streams a dropped answer"
                await asyncio.sleep(0.02)
            served.model.update_config(total_s=0.1)
            assert await answer(kept) == ANSWER  # the kept client goes on serving
        finally:
            await kept.aclose()

    asyncio.run(drop_after_first_words())
    assert not served.log.requests[0].finished and served.log.requests[1].finished


def test_another_event_loop_gets_a_client_of_its_own(served: Served) -> None:
    kept = kept_model(served)

    async def on_two_loops() -> list[str]:
        try:
            first = await answer(kept)
            # Another loop while this one lives (a thread of its own): a client of its own for the request.
            other = await asyncio.to_thread(asyncio.run, answer(kept))
            return [first, other, await answer(kept)]
        finally:
            await kept.aclose()

    assert asyncio.run(on_two_loops()) == [ANSWER] * 3
    home, other, again = served.ports()
    assert home == again != other
    # Closed, the client is made again for the next loop.
    assert asyncio.run(on_two_loops()) == [ANSWER] * 3
    assert len(set(served.ports())) == 4
