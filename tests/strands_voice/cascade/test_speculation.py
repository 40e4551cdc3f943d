"""Speculative answers through ``BidiAgent`` with ``VoiceCascade``: a real model's client (Strands'
``OpenAIModel`` against the local OpenAI-compatible stand-in, which logs what it is sent), the in-memory
TTS endpoint, and a caller who says a script (a tone per sentence, :mod:`support.said`).

"Please tell me the long version." [pause] "What does the Premium plan include?" in one breath: the answer
to the first part is asked for at the pause and held; the caller going on drops it (not one event, no
trace in either history); the whole question's answer, held at the next pause, goes out after the turn's
transcript.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from strands.bidi import BidiAgent
from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiOutputEvent,
    BidiResponseStartEvent,
    BidiResponseStopEvent,
    BidiTranscriptStopEvent,
)
from strands.bidi.types.media import AudioDelta
from support.call import silence, tone
from support.cascade import Recorder
from support.instant_tts import InstantTTS
from support.listen import LoudnessVad
from support.openai_model import served_openai_model
from support.said import SaidRecognizer

from strands_voice.listen import ListenSettings
from strands_voice.turns import TurnSettings

pytestmark = pytest.mark.timeout(120)

ONE = "Please tell me the long version."
TWO = "What does the Premium plan include?"
ANSWER = "It includes unlimited storage. It costs twenty five dollars a month."
FRAME = 640  # 20 ms of 16 kHz pcm16


class ScriptMic:
    """The caller's microphone: what the test says, at real-time speed; nothing (no time passes for the
    listener) while the test waits."""

    def __init__(self) -> None:
        self.frames: asyncio.Queue[bytes] = asyncio.Queue()
        self._empty = asyncio.Event()

    def say(self, pcm16: bytes) -> None:
        for start in range(0, len(pcm16), FRAME):
            self.frames.put_nowait(pcm16[start : start + FRAME].ljust(FRAME, b"\0"))
        self._empty.clear()

    async def said(self) -> None:
        """Once every frame said so far was taken."""
        await self._empty.wait()

    async def start(self, agent: Any) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def __call__(self) -> AudioDelta:
        frame = await self.frames.get()
        if self.frames.empty():
            self._empty.set()
        await asyncio.sleep(0.02)
        return AudioDelta(format="pcm", source={"bytes": frame})


@asynccontextmanager
async def running(agent: BidiAgent, mic: ScriptMic, recorder: Recorder) -> AsyncIterator[None]:
    task = asyncio.create_task(agent.run(inputs=[mic], outputs=[recorder]))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=15)


def stop_of(answer_id: str) -> Any:
    return lambda e: isinstance(e, BidiResponseStopEvent) and e.response_id == answer_id


def ids_of(event: BidiOutputEvent) -> set[str]:
    return {str(getattr(event, name, "")) for name in ("response_id", "content_id")} - {""}


async def asked(log: Any, count: int, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while len(log.requests) < count:
        assert time.monotonic() < deadline, f"the model was asked {len(log.requests)} times"
        await asyncio.sleep(0.02)


def two_part_question(speculate: bool) -> tuple[BidiAgent, Recorder, Any, Any]:
    """The question said in one breath, then "Thanks."; the agent, what it gave, the model's log, the
    cascade."""
    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade

    with served_openai_model(ScriptedModel(text=ANSWER, first_sentence_s=0.5, total_s=0.8)) as (model, log):
        voice = VoiceCascade(
            model,
            transport_factory=InstantTTS,
            options=VoiceOptions(voice="jm_kumo"),
            recognizer=SaidRecognizer([ONE, TWO, "Thanks."]),
            settings=ListenSettings(end_of_turn="silence", end_silence_s=0.5),
            vad=LoudnessVad(),
            turn_model=None,
            turn_settings=TurnSettings(speculate=speculate),
        )
        agent, mic, recorder = BidiAgent(model=voice), ScriptMic(), Recorder()

        async def scenario() -> None:
            async with running(agent, mic, recorder):
                mic.say(tone(1.0) + silence(0.2))  # the first part, and a pause
                await mic.said()
                if speculate:
                    await asked(log, 1)  # its answer is being written, held, when the caller goes on
                mic.say(tone(1.2) + silence(0.8))
                first = "answer-2" if speculate else "answer-1"
                await recorder.until(stop_of(first), within_s=60)
                mic.say(tone(0.6) + silence(0.8))  # "Thanks."
                await recorder.until(stop_of("answer-3" if speculate else "answer-2"), within_s=60)

        asyncio.run(scenario())
    return agent, recorder, log, voice


def test_a_dropped_speculation_leaves_no_event_and_no_trace_and_the_question_is_answered_once() -> None:
    from strands_voice_tools.openai_stand_in import strands_messages

    agent, recorder, log, voice = two_part_question(speculate=True)
    # Three model calls: the first part's (dropped), the whole question's and "Thanks." (both released).
    assert log.questions == [ONE, f"{ONE} {TWO}", "Thanks."]
    events = [event for _, event in recorder.events]
    assert not [event for event in events if any(i.startswith("answer-1") for i in ids_of(event))]
    # Each answer after the caller's transcript of its turn; its audio after its start.
    kinds = [
        "user" if isinstance(e, BidiTranscriptStopEvent) and e.role == "user" else type(e).__name__
        for e in events
        if isinstance(e, BidiTranscriptStopEvent | BidiResponseStartEvent | BidiAudioDeltaEvent)
    ]
    starts = [i for i, kind in enumerate(kinds) if kind == "BidiResponseStartEvent"]
    users = [i for i, kind in enumerate(kinds) if kind == "user"]
    assert len(starts) == 2 and len(users) == 2 and users[0] < starts[0] < users[1] < starts[1]
    assert kinds.index("BidiAudioDeltaEvent") > starts[0]
    # The model's history, and BidiAgent's: the question once, its answer, no trace of the dropped one.
    history = [
        (m["role"], str(m["content"][0]["text"])) for m in strands_messages(log.requests[-1].body["messages"])
    ]
    assert history == [("user", f"{ONE} {TWO}"), ("assistant", ANSWER), ("user", "Thanks.")]
    said = [str(m["content"][0]["text"]) for m in agent.messages if m["role"] == "user" and m["content"]]
    assert said == [f"{ONE} {TWO}", "Thanks."]
    assert [m["role"] for m in voice.conversation] == ["user", "assistant", "user", "assistant"]


def test_without_speculation_the_question_is_asked_once_when_the_turn_ends() -> None:
    agent, _, log, _ = two_part_question(speculate=False)
    assert log.questions == [f"{ONE} {TWO}", "Thanks."]
    said = [str(m["content"][0]["text"]) for m in agent.messages if m["role"] == "user" and m["content"]]
    assert said == [f"{ONE} {TWO}", "Thanks."]
