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

from strands_voice_protocol.telephony.phone_audio import CallToPhone
from websockets.asyncio.client import ClientConnection, connect

__all__ = ["FRAME_BYTES", "FRAME_S", "FakePhone"]

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
