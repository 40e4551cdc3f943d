"""The input and output streams of ``strands-voice talk --input/--output`` and ``bench --talk``.

:class:`PacedInput` is a ``BidiAgent`` input stream that plays queued utterances (16 kHz PCM16) at
real-time speed in 20 ms frames, silence in between, like a microphone. :class:`AnswerRecorder` is an
output stream that keeps every event with its time, the answers' audio, and prints the transcripts.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiOutputEvent,
    BidiResponseStopEvent,
    BidiTranscriptBlockEvent,
)
from strands.bidi.types.media import AudioDelta
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.audio.wav import wav_to_pcm16
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = [
    "LISTEN_RATE",
    "AnswerRecorder",
    "PacedInput",
    "laptop_devices",
    "read_wav_16k",
    "transcript_line",
]

LISTEN_RATE: Final = 16000
_FRAME_S: Final = 0.02


def transcript_line(event: BidiOutputEvent) -> str | None:
    """A finished transcript as the conversation prints it (``you: ...`` / ``agent: ...``); None for other
    events."""
    if not isinstance(event, BidiTranscriptBlockEvent):
        return None
    return f"{'you' if event.role == 'user' else 'agent'}: {event.transcript}"


def _device_choice(name: str | None) -> int | str | None:
    """A device given on the command line: its index when it is a number, else (part of) its name."""
    return int(name) if name is not None and name.isdigit() else name


@contextlib.contextmanager
def laptop_devices(args: argparse.Namespace) -> Iterator[tuple[Any, Any]]:
    """``(speakers, microphone)`` as ``talk``'s options name them, the speakers' echo cancelled from the
    microphone unless ``--no-aec``; both closed on exit."""
    from strands_voice import Microphone, Speakers

    with (
        Speakers(_device_choice(args.output_device)) as speakers,
        Microphone(
            _device_choice(args.input_device),
            speakers=speakers,
            echo_cancellation=not args.no_aec,
            noise_suppression=args.noise_suppression,
        ) as microphone,
    ):
        yield speakers, microphone


def read_wav_16k(data: bytes) -> bytes:
    """A mono 16-bit WAV file's samples as PCM16 at 16 kHz."""
    return resample_linear(wav_to_pcm16(data), SAMPLE_RATE, LISTEN_RATE)


class PacedInput:
    """An input stream: queued utterances at real-time speed, silence in between (20 ms frames).

    Attributes:
        spoke: ``(start, end)`` of each utterance on the caller's clock (``perf_counter``): when its first
            frame's audio began and its last frame's ended. A frame is handed over when its audio has
            ended, never earlier; a late reader gets late frames, and the lag counts against the system,
            not the caller (its speech does not seem to start later).
    """

    def __init__(self) -> None:
        self._frame = 2 * round(_FRAME_S * LISTEN_RATE)
        self._queue: list[bytearray] = []
        self._next: float | None = None
        self._current_started: float | None = None
        self.spoke: list[tuple[float, float]] = []
        self.idle = asyncio.Event()
        self.idle.set()

    @property
    def current_start(self) -> float | None:
        """When the utterance playing now started, on the caller's clock (None: silence)."""
        return self._current_started

    def say(self, pcm16: bytes) -> None:
        """Queue an utterance (16 kHz PCM16); it starts after the ones queued before it."""
        if pcm16:
            self._queue.append(bytearray(pcm16))
            self.idle.clear()

    async def start(self, agent: Any) -> None:
        """Start the real-time clock."""
        self._next = time.perf_counter()

    async def stop(self) -> None:
        """Nothing to release."""

    async def __call__(self) -> AudioDelta:
        """The next 20 ms frame, at its real time."""
        self._next = (self._next or time.perf_counter()) + _FRAME_S
        await asyncio.sleep(max(0.0, self._next - time.perf_counter()))
        frame = b""
        if self._queue:
            ends = self._next
            if self._current_started is None:
                self._current_started = ends - _FRAME_S
            utterance = self._queue[0]
            frame = bytes(utterance[: self._frame])
            del utterance[: self._frame]
            if not utterance:
                self._queue.pop(0)
                # The last frame may be short (padded with silence): the speech ends with its samples.
                spoken_s = len(frame) / (2 * LISTEN_RATE)
                self.spoke.append((self._current_started, ends - _FRAME_S + spoken_s))
                self._current_started = None
                if not self._queue:
                    self.idle.set()
        return AudioDelta(format="pcm", source={"bytes": frame.ljust(self._frame, b"\0")})


@dataclass
class AnswerRecorder:
    """An output stream: every event with its ``perf_counter`` time; transcripts printed when given.

    Attributes:
        events: ``(time, event)`` in arrival order.
        show: Called with each finished transcript line (``"you: ..."`` / ``"agent: ..."``).
    """

    events: list[tuple[float, BidiOutputEvent]] = field(default_factory=list)
    show: Callable[[str], None] | None = None
    _waiters: list[tuple[Callable[[BidiOutputEvent], bool], asyncio.Future[float]]] = field(
        default_factory=list
    )

    async def start(self, agent: Any) -> None:
        """Nothing to open."""

    async def stop(self) -> None:
        """Nothing to release."""

    async def __call__(self, event: BidiOutputEvent) -> None:
        """Record ``event``; wake whoever waits for it."""
        now = time.perf_counter()
        self.events.append((now, event))
        line = transcript_line(event)
        if self.show is not None and line is not None:
            self.show(line)
        for predicate, future in list(self._waiters):
            if not future.done() and predicate(event):
                future.set_result(now)

    async def until(self, predicate: Callable[[BidiOutputEvent], bool], within_s: float) -> float:
        """The time of the next event ``predicate`` accepts (at most ``within_s`` away)."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, within_s)

    async def answer_ended(self, within_s: float) -> float:
        """The time of the next ``BidiResponseStopEvent``."""
        return await self.until(lambda event: isinstance(event, BidiResponseStopEvent), within_s)

    def audio(self, content_id_prefix: str = "") -> bytes:
        """The answers' audio (24 kHz PCM16), in order."""
        return b"".join(
            base64.b64decode(event.audio)
            for _, event in self.events
            if isinstance(event, BidiAudioDeltaEvent) and event.content_id.startswith(content_id_prefix)
        )
