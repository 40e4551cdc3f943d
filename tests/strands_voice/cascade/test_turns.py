"""The cascade's turn adapter (``strands_voice.cascade._turns``) with plain engines: the core's actions become
the cascade's calls and ``strands.bidi`` events; a failed turn is not answered; speech over an answer holds
it, then barges in."""

from __future__ import annotations

import asyncio
from typing import Any

from strands.bidi.types.events import (
    BidiBargeInEvent,
    BidiOutputEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)
from support.listen import HeldRecognizer, LoudnessVad, silence, tone

from strands_voice.cascade._turns import CascadeTurns
from strands_voice.listen import ListenSettings
from strands_voice.turns import TurnSettings


class Host:
    """Stands in for the cascade: keeps what the adapter emits and asks of it."""

    def __init__(self, recognizer: HeldRecognizer) -> None:
        self.recognizer = recognizer
        self.marks: dict[str, float] = {}
        self.emitted: list[BidiOutputEvent] = []
        self.calls: list[tuple[Any, ...]] = []

    def emit(self, event: BidiOutputEvent, /) -> None:
        self.emitted.append(event)

    def start_answer(self, answer_id: str, prompt: str, *, held: bool = False) -> None:
        self.calls.append(("hold start" if held else "start", answer_id, prompt))

    def release_answer(self, answer_id: str) -> None:
        self.calls.append(("release", answer_id))

    def hold_answer(self, answer_id: str, hold: bool) -> None:
        self.calls.append(("hold" if hold else "resume", answer_id))

    def stop_answer(self, answer_id: str, *, heard: bool) -> None:
        self.calls.append(("stop" if heard else "drop", answer_id))


async def spoken(turns: CascadeTurns, recognizer: HeldRecognizer, audio: bytes) -> None:
    """Feed ``audio`` in 20 ms frames; each turn's recognition ends before the next frame."""
    for start in range(0, len(audio), 640):
        await turns.feed(audio[start : start + 640])
        recognizer.release_all()
        await turns.listener.settle()
        for _ in range(3):
            await asyncio.sleep(0)


def run_turns(failures: tuple[str, ...], script: Any) -> Host:
    async def run() -> Host:
        recognizer = HeldRecognizer(failures=failures)
        host = Host(recognizer)
        settings = ListenSettings(end_silence_s=0.3, end_of_turn="silence")
        # The engine's words while speaking ("turn n so far") are not the turn's: no speculation here.
        quiet = TurnSettings(speculate=False)
        turns = CascadeTurns(host, settings, LoudnessVad(), turn_settings=quiet)  # type: ignore[arg-type]
        running = asyncio.create_task(turns.run())
        await script(turns, recognizer)
        await turns.aclose()
        await asyncio.wait_for(running, 5)
        return host

    return asyncio.run(run())


def test_a_turn_the_recognizer_fails_on_is_not_answered_and_the_next_is() -> None:
    async def script(turns: CascadeTurns, recognizer: HeldRecognizer) -> None:
        await spoken(turns, recognizer, (tone(1.5) + silence(0.5)) * 2)

    host = run_turns(("finish", ""), script)
    assert host.calls == [("start", "answer-1", "turn 2")]
    kinds: list[Any] = [type(event) for event in host.emitted]
    assert kinds == [BidiTranscriptStartEvent, BidiTranscriptDeltaEvent, BidiTranscriptStopEvent]
    assert [e.delta for e in host.emitted if isinstance(e, BidiTranscriptDeltaEvent)] == ["turn 2"]


def test_speech_over_an_answer_holds_it_then_barges_in_and_is_answered() -> None:
    async def script(turns: CascadeTurns, recognizer: HeldRecognizer) -> None:
        await spoken(turns, recognizer, tone(1.5) + silence(0.5))
        turns.answer_speaking("answer-1")
        await spoken(turns, recognizer, tone(1.5) + silence(0.5))

    host = run_turns((), script)
    assert host.calls[:2] == [("start", "answer-1", "turn 1"), ("hold", "answer-1")]
    assert ("stop", "answer-1") in host.calls and host.calls[-1] == ("start", "answer-2", "turn 2")
    assert sum(isinstance(event, BidiBargeInEvent) for event in host.emitted) == 1
    assert host.recognizer.prompts[1]  # the turn over the answer was heard with the backchannels as context
