"""Plain engines for listening tests (library and app): a loudness VAD, a recognizer whose turns end (or
fail) when told, and a collector of a listener's events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import RecognitionError

from strands_voice.listen import Listener, ListenEvent, Recognized

RATE = 16000


class LoudnessVad:
    """A frame louder than -30 dBFS (RMS) is speech: deterministic, for a tone standing in for a voice."""

    frame_samples = 512

    def probability(self, frame: npt.NDArray[np.float32]) -> float:
        return 1.0 if float(np.sqrt(np.mean(frame**2))) > 10 ** (-30 / 20) else 0.0

    def reset(self) -> None:
        return None


class HeldStream:
    """A turn's recognition that ends when the test releases it."""

    def __init__(self, number: int, fail: str = "") -> None:
        self.number = number
        self.fail = (
            fail  # "feed" or "finish": where this turn's recognition breaks; "invent": untrusted words
        )
        self.fed = 0
        self.closed = False
        self.release = asyncio.Event()
        self.partial_given = False

    async def feed(self, pcm16: bytes) -> list[str]:
        self.fed += len(pcm16)
        if self.fail == "feed" and self.fed > 32_000:
            raise RecognitionError("connection_lost", "the stream ended early", retryable=True)
        if self.fed > 16_000 and not self.partial_given:
            self.partial_given = True
            return [f"turn {self.number} so far"]  # a streaming engine's partial, half a second in
        return []

    async def pause(self) -> None:
        pass

    async def resume(self) -> None:
        pass

    async def words_so_far(self) -> Recognized | None:
        return Recognized(f"turn {self.number} so far") if self.partial_given else None

    async def finish(self) -> Recognized:
        await self.release.wait()
        if self.fail == "finish":
            raise ValueError("the engine broke")
        if self.fail == "invent":  # what the recognizer's check makes of "five five" written as twenty 5s
            return Recognized(" ".join(["5"] * 20), 0.4, trusted=False)
        return Recognized(f"turn {self.number}")

    async def aclose(self) -> None:
        self.closed = True


class HeldRecognizer:
    """Turn n's stream fails where ``failures[n]`` says ("open", "feed", "finish", "invent"; "" it works)."""

    def __init__(self, failures: tuple[str, ...] = ()) -> None:
        self.streams: list[HeldStream] = []
        self.failures = failures
        self.opened = 0
        self.prompts: list[str | None] = []  # the context each turn's stream was opened with

    def release_all(self) -> None:
        """Let every stream opened so far end its recognition."""
        for stream in self.streams:
            stream.release.set()

    async def open(self, prompt: str | None = None) -> HeldStream:
        self.opened += 1
        self.prompts.append(prompt)
        fail = self.failures[self.opened - 1] if self.opened <= len(self.failures) else ""
        if fail == "open":
            raise RecognitionError("connection_failed", "No AWS credentials for Amazon Transcribe")
        self.streams.append(HeldStream(self.opened, fail))
        return self.streams[-1]

    async def warm_up(self) -> None:
        pass


def tone(seconds: float) -> bytes:
    t = np.arange(round(seconds * RATE)) / RATE
    return (np.sin(2 * np.pi * 220 * t) * 8000).astype(np.int16).tobytes()


def silence(seconds: float) -> bytes:
    return bytes(2 * round(seconds * RATE))


class Heard:
    """A listener's events, collected while a test feeds it (make it inside the running loop)."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.events: list[ListenEvent] = []
        self._reading = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for event in self.listener.events():
            self.events.append(event)

    async def feed(self, audio: bytes, *, after_frame: Callable[[], None] | None = None) -> None:
        """``audio`` in 20 ms microphone frames; ``after_frame`` runs after each."""
        for start in range(0, len(audio), 640):
            await self.listener.feed(audio[start : start + 640])  # never raises: a turn fails, not the feed
            if after_frame is not None:
                after_frame()

    async def close(self) -> list[ListenEvent]:
        """Close the listener once every turn is recognized; every event it gave."""
        await self.listener.aclose(wait_for_final=True)
        await asyncio.wait_for(self._reading, 10)
        return self.events


def turn_model_installed() -> None:
    """Smart Turn's file is there (the ``listen`` group), or skip (locally) / fail (CI)."""
    from optional_groups import skip_or_fail
    from strands_voice_protocol.errors import MissingDependencyError

    from strands_voice.listen._turn_model import smart_turn_model_path

    try:
        smart_turn_model_path()
    except MissingDependencyError as error:
        skip_or_fail(str(error))
