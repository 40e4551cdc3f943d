"""The cascade's ears (``strands_voice.cascade._hearing``) with plain engines: a turn the recognizer fails on
closes the transcript its partials began and is not answered; the next turn is."""

from __future__ import annotations

import asyncio
from typing import Any

from strands.bidi.types.events import (
    BidiOutputEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)
from support.listen import HeldRecognizer, LoudnessVad, silence, tone

from strands_voice.cascade._hearing import Hearing
from strands_voice.listen import ListenSettings


class Host:
    """Stands in for the cascade: keeps what the ears emit, answers and barge-ins."""

    def __init__(self, recognizer: HeldRecognizer) -> None:
        self.recognizer = recognizer
        self.marks: dict[str, float] = {}
        self.emitted: list[BidiOutputEvent] = []
        self.answered: list[str] = []
        self.barge_ins = 0

    def emit(self, event: BidiOutputEvent, /) -> None:
        self.emitted.append(event)

    def barge_in(self) -> None:
        self.barge_ins += 1

    async def user_turn(self, text: str) -> None:
        self.answered.append(text)


def test_a_turn_the_recognizer_fails_on_closes_its_transcript_and_is_not_answered() -> None:
    async def run() -> Host:
        recognizer = HeldRecognizer(failures=("finish", ""))
        host = Host(recognizer)
        hearing = Hearing(host, ListenSettings(end_silence_s=0.3), LoudnessVad())  # type: ignore[arg-type]
        reading = asyncio.create_task(hearing.run())
        turn = tone(1.5) + silence(0.5)
        for start in range(0, 2 * len(turn), 640):
            await hearing.feed((turn * 2)[start : start + 640])
            for stream in recognizer.streams:
                stream.release.set()
            for _ in range(3):  # a turn's recognition ends before the next turn's words (as in real time)
                await asyncio.sleep(0)
        await hearing.listener.aclose(wait_for_final=True)
        await asyncio.wait_for(reading, 5)
        return host

    host = asyncio.run(run())
    kinds: list[Any] = [type(event) for event in host.emitted]
    assert kinds == [BidiTranscriptStartEvent, BidiTranscriptDeltaEvent, BidiTranscriptStopEvent] * 2
    deltas = [event for event in host.emitted if isinstance(event, BidiTranscriptDeltaEvent)]
    assert [event.delta for event in deltas] == ["turn 1 so far", "turn 2 so far"]
    assert host.answered == ["turn 2"] and host.barge_ins == 2
