"""A fake phone on a Twilio Media Streams route: Twilio's side of ``<Connect><Stream>``, played for real.

:class:`FakePhone` opens the stream (``connected``, ``start`` with a ``streamSid``, a ``callSid`` and the
TwiML parameters), speaks 16 kHz PCM16 as μ-law 8 kHz ``media`` frames of 20 ms at real time, and plays
what the server sends as Twilio does: its ``media`` join a playback buffer drained at real time (20 ms a
tick), a ``mark`` is returned when the audio before it has been played, ``clear`` empties the buffer
(returning its marks, as Twilio does). What was played is kept with the time each 20 ms went out, so a
test can tell when the phone fell silent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from strands_voice_protocol.telephony.phone_audio import CallToPhone
from websockets.asyncio.client import ClientConnection, connect

__all__ = [
    "FRAME_BYTES",
    "FRAME_S",
    "FakePhone",
    "PhoneFigures",
    "silent_since",
    "spoken_phone_call",
    "voiced_span",
]

FRAME_S = 0.02
FRAME_BYTES = 160  # 20 ms of μ-law at 8 kHz


@dataclass
class FakePhone:
    """One phone call (see the module docstring)."""

    socket: ClientConnection
    stream_sid: str = "MZ00000000000000000000000000000001"
    received: list[dict[str, Any]] = field(default_factory=list)  # every frame from the server
    played: list[tuple[float, bytes]] = field(default_factory=list)  # (time, 20 ms of μ-law)
    marks_returned: list[str] = field(default_factory=list)
    played_marks: list[tuple[float, str]] = field(default_factory=list)  # returned having been played
    clears: list[float] = field(default_factory=list)
    silences: list[float] = field(default_factory=list)  # when playing audio stopped (cleared, or ran dry)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    close_code: int | None = None
    close_reason: str = ""
    _buffer: deque[bytes | str] = field(default_factory=deque)  # audio bytes and mark names, in order
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _encoder: CallToPhone = field(default_factory=CallToPhone)

    @classmethod
    async def dial(
        cls, url: str, parameters: dict[str, str] | None = None, *, connected: bool = True
    ) -> FakePhone:
        """Open the stream and start it (``connected`` first unless told)."""
        phone = cls(await connect(url, max_size=None))
        phone._tasks = [asyncio.create_task(phone._read()), asyncio.create_task(phone._play())]
        if connected:
            await phone.send({"event": "connected", "protocol": "Call", "version": "1.0.0"})
        await phone.send(phone.start_message(parameters or {}))
        return phone

    def start_message(self, parameters: dict[str, str], encoding: str = "audio/x-mulaw") -> dict[str, Any]:
        start = {
            "accountSid": "AC00000000000000000000000000000001",
            "streamSid": self.stream_sid,
            "callSid": "CA00000000000000000000000000000001",
            "tracks": ["inbound"],
            "mediaFormat": {"encoding": encoding, "sampleRate": 8000, "channels": 1},
            "customParameters": parameters,
        }
        return {"event": "start", "sequenceNumber": "1", "start": start, "streamSid": self.stream_sid}

    async def send(self, message: dict[str, Any]) -> None:
        await self.socket.send(json.dumps(message))

    def media_message(self, mulaw: bytes) -> dict[str, Any]:
        payload = base64.b64encode(mulaw).decode()
        return {
            "event": "media",
            "streamSid": self.stream_sid,
            "media": {"track": "inbound", "payload": payload},
        }

    async def speak(self, pcm16: bytes) -> None:
        """``pcm16`` (16 kHz) as 20 ms μ-law media frames, at real time."""
        mulaw = self._encoder.convert(pcm16)
        start = time.perf_counter()
        for index, offset in enumerate(range(0, len(mulaw), FRAME_BYTES)):
            await self.send(self.media_message(mulaw[offset : offset + FRAME_BYTES]))
            await asyncio.sleep(max(0.0, start + (index + 1) * FRAME_S - time.perf_counter()))

    async def _read(self) -> None:
        try:
            async for text in self.socket:
                message = json.loads(text)
                message["_at"] = time.monotonic()
                self.received.append(message)
                event = message["event"]
                if event == "media":
                    audio = base64.b64decode(message["media"]["payload"])
                    self._buffer.extend(audio[i : i + FRAME_BYTES] for i in range(0, len(audio), FRAME_BYTES))
                elif event == "mark":
                    self._buffer.append(str(message["mark"]["name"]))
                elif event == "clear":
                    self.clears.append(time.monotonic())
                    if self.playing():
                        self.silences.append(self.clears[-1])
                    marks = [item for item in self._buffer if isinstance(item, str)]
                    self._buffer.clear()
                    for name in marks:  # Twilio returns the marks of the cleared audio
                        await self._return_mark(name)
        except Exception:
            pass  # the server closed without a close frame: the test checks what arrived
        finally:
            self.close_code = self.socket.close_code
            self.close_reason = self.socket.close_reason or ""
            self.closed.set()

    async def _return_mark(self, name: str) -> None:
        self.marks_returned.append(name)
        try:
            await self.send({"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}})
        except Exception:
            pass  # the call is over

    async def _play(self) -> None:
        """Drain the buffer at real time: 20 ms a tick; a mark goes back when reached."""
        start = time.perf_counter()
        tick = 0
        while not self.closed.is_set():
            while self._buffer and isinstance(self._buffer[0], str):
                name = str(self._buffer.popleft())
                self.played_marks.append((time.monotonic(), name))
                await self._return_mark(name)
            if self._buffer:
                self.played.append((time.monotonic(), bytes(self._buffer.popleft())))
                if not self.playing():
                    self.silences.append(self.played[-1][0] + FRAME_S)  # the last 20 ms ends: dry
            tick += 1
            await asyncio.sleep(max(0.0, start + tick * FRAME_S - time.perf_counter()))

    def playing(self) -> bool:
        """Whether audio waits to be played."""
        return any(isinstance(item, bytes) for item in self._buffer)

    def of(self, event: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["event"] == event]

    def last_played_at(self) -> float | None:
        return self.played[-1][0] if self.played else None

    async def hang_up(self) -> None:
        """``stop`` (Twilio's hang-up); the server ends the call and closes the socket."""
        await self.send({"event": "stop", "streamSid": self.stream_sid, "stop": {"callSid": "CA1"}})
        await self.finish()

    async def finish(self) -> None:
        """Wait for the server's close; stop playing."""
        await asyncio.wait_for(self.closed.wait(), 15.0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def voiced_span(pcm16: bytes, rate: int = 16_000) -> tuple[float, float]:
    """Where the voice in ``pcm16`` starts and ends (seconds; the first and last sample above -40 dBFS)."""
    loud = np.flatnonzero(np.abs(np.frombuffer(pcm16, dtype="<i2")) > 328)
    return (float(loud[0]) / rate, float(loud[-1]) / rate) if loud.size else (0.0, 0.0)


def silent_since(phone: FakePhone, after: float) -> float | None:
    """When the phone stopped playing after ``after`` (cleared, or ran dry; None: it still plays)."""
    return next((at for at in phone.silences if at > after), None)


@dataclass
class PhoneFigures:
    """One spoken phone call's times (seconds; None: not seen).

    Attributes:
        voice_to_voice: From the end of the question's voice to the first answer audio played.
        barge_silence: From the start of the barge-in's voice to the phone falling silent.
        barge_answer: From the end of the barge-in's voice to its answer's first audio played.
    """

    voice_to_voice: float | None
    barge_silence: float | None
    barge_answer: float | None


async def spoken_phone_call(
    url: str, question: bytes, barge: bytes, *, heard_s: float = 2.0, parameters: dict[str, str] | None = None
) -> tuple[FakePhone, PhoneFigures]:
    """Ask ``question`` (16 kHz speech) at real time, speak ``barge`` ``heard_s`` into the answer, listen
    until the second answer plays; the times of the call."""
    phone = await FakePhone.dial(url, parameters)
    await phone.speak(bytes(16_000))  # a second of line noise first
    start = time.monotonic()
    await phone.speak(question)
    question_end = start + voiced_span(question)[1]
    await _listen(phone, lambda: len(phone.played) * FRAME_S >= heard_s, 60.0)
    first_played = phone.played[0][0]
    barge_at = time.monotonic()
    await phone.speak(barge)
    barge_start, barge_end = (barge_at + t for t in voiced_span(barge))
    first = phone.of("mark")[0]["mark"]["name"].split(".")[0] if phone.of("mark") else ""
    later = lambda: [n for _, n in phone.played_marks if n.split(".")[0] != first]  # noqa: E731
    await _listen(phone, lambda: bool(later()), 90.0)  # a later answer's first sentence was played
    silent = silent_since(phone, barge_start)
    cut = phone.clears[-1] if phone.clears else barge_start  # the barge-in's clear: answer 1 is gone
    second = next((at for at, _ in phone.played if at > cut), None)
    await phone.hang_up()
    return phone, PhoneFigures(
        first_played - question_end,
        None if silent is None else silent - barge_start,
        None if second is None else second - barge_end,
    )


async def _listen(phone: FakePhone, done: Any, within_s: float) -> None:
    """Keep the line open (silence at real time) until ``done()``."""
    deadline = time.monotonic() + within_s
    while not done():
        if time.monotonic() > deadline:
            seen = [m["event"] if m["event"] != "mark" else m["mark"]["name"] for m in phone.received]
            seen = [event for event in seen if event != "media"]
            raise AssertionError(f"not done: {seen}; played {phone.played_marks}")
        await phone.speak(bytes(640))
