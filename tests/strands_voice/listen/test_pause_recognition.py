"""When a pause's words are recognized: once, when the pause is judged (two silent frames after the last
sound, or after the last frame the VAD was unsure of), and from the whole turn at its end when frames the VAD
was unsure of came after that (they may hold the caller's quiet last word)."""

from __future__ import annotations

import asyncio

import numpy as np
import numpy.typing as npt
from support.listen import Heard

from strands_voice.listen import Listener, ListenSettings, Recognized, Transcript

FRAME = 512  # samples: the VAD's frame, and the unit every audio below is built from


class ThreeLevelVad:
    """Loud frames are speech, quiet ones in between the thresholds (the VAD unsure), the rest silence."""

    frame_samples = FRAME

    def probability(self, frame: npt.NDArray[np.float32]) -> float:
        level = float(np.sqrt(np.mean(frame**2)))
        return 1.0 if level > 0.05 else 0.4 if level > 0.002 else 0.0

    def reset(self) -> None:
        return None


def frames(kind: str, count: int) -> bytes:
    amplitude = {"loud": 8000, "quiet": 300, "silent": 0}[kind]
    t = np.arange(count * FRAME) / 16000
    return (np.sin(2 * np.pi * 220 * t) * amplitude).astype(np.int16).tobytes()


class RecordingStream:
    """Records the turn's audio as each recognition starts: at a pause, and at the turn's end."""

    def __init__(self) -> None:
        self.audio = bytearray()
        self.speculated: list[bytes] = []  # the audio each pause() recognized
        self.speculation: bytes | None = None
        self.finished: bytes | None = None  # the audio the final words are from

    async def feed(self, pcm16: bytes) -> list[str]:
        self.audio += pcm16
        return []

    async def pause(self) -> None:
        self.speculation = bytes(self.audio)
        self.speculated.append(self.speculation)

    async def resume(self) -> None:
        self.speculation = None

    async def words_so_far(self) -> Recognized | None:
        return Recognized("so far") if self.speculation is not None else None

    async def finish(self) -> Recognized:
        self.finished = self.speculation if self.speculation is not None else bytes(self.audio)
        return Recognized(f"{len(self.finished)} bytes")

    async def aclose(self) -> None:
        return None


class RecordingRecognizer:
    def __init__(self) -> None:
        self.stream = RecordingStream()

    async def open(self, prompt: str | None = None) -> RecordingStream:
        return self.stream

    async def warm_up(self) -> None:
        return None


def hear(audio: bytes) -> RecordingStream:
    recognizer = RecordingRecognizer()

    async def run() -> list[object]:
        listener = Listener(
            ListenSettings(end_of_turn="silence", end_silence_s=0.4),
            vad=ThreeLevelVad(),
            recognizer=recognizer,
            turn_model=None,
        )
        heard = Heard(listener)
        await heard.feed(audio)
        return list(await heard.close())

    events = asyncio.run(run())
    finals = [event for event in events if isinstance(event, Transcript) and event.final]
    assert len(finals) == 1, events
    return recognizer.stream


def kinds(audio: bytes) -> list[str]:
    """Each frame's kind, in order (the audio is whole frames)."""
    samples = np.frombuffer(audio, dtype=np.int16).astype(np.float32).reshape(-1, FRAME)
    peaks = np.abs(samples).max(axis=1)
    return ["loud" if peak > 4000 else "quiet" if peak > 0 else "silent" for peak in peaks]


def ends_with(audio: bytes, *runs: tuple[str, int]) -> bool:
    tail = [kind for kind, count in runs for _ in range(count)]
    return kinds(audio)[-len(tail) :] == tail


def test_a_pause_is_recognized_once_when_it_is_judged_and_its_words_are_the_final_ones() -> None:
    stream = hear(frames("loud", 20) + frames("silent", 20))
    assert len(stream.speculated) == 1
    assert ends_with(stream.speculated[0], ("loud", 1), ("silent", 2))
    assert stream.finished == stream.speculated[0]


def test_quieter_frames_before_the_judgment_are_in_the_pause_s_recognition() -> None:
    stream = hear(frames("loud", 20) + frames("silent", 1) + frames("quiet", 3) + frames("silent", 20))
    assert len(stream.speculated) == 1
    assert ends_with(stream.speculated[0], ("quiet", 3), ("silent", 2))
    assert stream.finished == stream.speculated[0]


def test_quieter_frames_after_the_judgment_are_in_the_final_recognition() -> None:
    audio = frames("loud", 20) + frames("silent", 3) + frames("quiet", 3) + frames("silent", 20)
    stream = hear(audio)
    assert len(stream.speculated) == 1 and "quiet" not in kinds(stream.speculated[0])
    assert stream.finished is not None and kinds(stream.finished).count("quiet") == 3
