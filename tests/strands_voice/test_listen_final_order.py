"""The listener's final transcripts go out in turn order, whichever recognition ends first."""

from __future__ import annotations

import asyncio

import numpy as np
import numpy.typing as npt

from strands_voice.listen import Listener, ListenSettings, Transcript, TurnEnded

RATE = 16000


class LoudnessVad:
    """Speech wherever the frame is not silent (the test's audio is a tone or zeros)."""

    frame_samples = 512

    def probability(self, frame: npt.NDArray[np.float32]) -> float:
        return 0.9 if float(np.abs(frame).max()) > 0.01 else 0.0

    def reset(self) -> None:
        pass


class HeldStream:
    """A turn's recognition that ends when the test releases it."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.fed = 0
        self.release = asyncio.Event()

    async def feed(self, pcm16: bytes) -> list[str]:
        self.fed += len(pcm16)
        return []

    async def pause(self) -> None:
        pass

    async def resume(self) -> None:
        pass

    async def finish(self) -> str:
        await self.release.wait()
        return f"turn {self.number}"

    async def aclose(self) -> None:
        pass


class HeldRecognizer:
    def __init__(self) -> None:
        self.streams: list[HeldStream] = []

    async def open(self) -> HeldStream:
        self.streams.append(HeldStream(len(self.streams) + 1))
        return self.streams[-1]

    async def warm_up(self) -> None:
        pass


def tone(seconds: float) -> bytes:
    t = np.arange(round(seconds * RATE)) / RATE
    return (np.sin(2 * np.pi * 220 * t) * 8000).astype(np.int16).tobytes()


def silence(seconds: float) -> bytes:
    return bytes(2 * round(seconds * RATE))


def test_a_later_turn_recognized_first_still_comes_second() -> None:
    async def run() -> list[object]:
        recognizer = HeldRecognizer()
        listener = Listener(ListenSettings(end_silence_s=0.3), vad=LoudnessVad(), recognizer=recognizer)
        events: list[object] = []

        async def collect() -> None:
            async for event in listener.events():
                events.append(event)

        consumer = asyncio.create_task(collect())
        await listener.feed(tone(0.6) + silence(0.5) + tone(0.6) + silence(0.5))
        first, second = recognizer.streams
        assert first.fed > 0 and second.fed > 0
        second.release.set()  # the later turn's text is ready first
        for _ in range(20):
            await asyncio.sleep(0)
        assert not any(isinstance(event, Transcript) for event in events)
        first.release.set()
        await listener.aclose(wait_for_final=True)
        await asyncio.wait_for(consumer, 5)
        return events

    events = asyncio.run(run())
    assert [type(event) for event in events].count(TurnEnded) == 2
    finals = [event.text for event in events if isinstance(event, Transcript) and event.final]
    assert finals == ["turn 1", "turn 2"]
