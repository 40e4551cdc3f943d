"""Spoken-call test support: a WebSocket caller, and plain engines for the library's real Listener.

:class:`Caller` is a client of ``WS /ws`` (the ``websockets`` library): it sends ``start``, audio, prompts
and interrupts, and records what comes back (JSON events and binary audio, in arrival order, each with
its ``time.monotonic()``).

Without the ``listen`` group (Silero, Whisper) the protocol tests still run the library's
:class:`~strands_voice.listen.Listener` (its turn detector, its recognition stream handling) with two
plain engines: :class:`LoudnessVad` (a frame louder than -30 dBFS is speech) and :class:`ScriptedRecognizer`
(each turn's text is the next of a list), and a "voice" that is a tone (:func:`tone`). The tests with the
real engines are in ``test_call_spoken.py``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from strands_voice.listen import Recognized
from support.listen import LoudnessVad

RATE = 16000
START = {"type": "start", "format": "pcm16", "sample_rate": RATE}


def tone(seconds: float, hz: float = 220.0, level: float = 0.3) -> bytes:
    """A tone as 16 kHz PCM16 (speech to :class:`LoudnessVad`)."""
    t = np.arange(round(seconds * RATE)) / RATE
    return (np.sin(2 * np.pi * hz * t) * level * 32767).astype("<i2").tobytes()


def silence(seconds: float) -> bytes:
    """Silence as 16 kHz PCM16."""
    return bytes(2 * round(seconds * RATE))


def frames(pcm: bytes, frame_s: float = 0.02) -> Iterator[bytes]:
    """``pcm`` cut into microphone frames."""
    step = 2 * round(frame_s * RATE)
    for offset in range(0, len(pcm), step):
        yield pcm[offset : offset + step]


class _ScriptedStream:
    def __init__(self, text: str) -> None:
        self.text = text
        self.fed = 0

    async def feed(self, pcm16: bytes) -> list[str]:
        self.fed += len(pcm16)
        return []

    async def pause(self) -> None:
        return None

    async def resume(self) -> None:
        return None

    async def words_so_far(self) -> Recognized | None:
        return Recognized(self.text)

    async def finish(self) -> Recognized:
        return Recognized(self.text)

    async def aclose(self) -> None:
        return None


class ScriptedRecognizer:
    """Each turn is recognized as the next text of ``texts`` (then the last one again); an exception there
    is what opening that turn's stream raises (a recognizer failing on it)."""

    def __init__(self, texts: list[str | Exception]) -> None:
        self.texts = list(texts)
        self.turns = 0

    async def open(self, prompt: str | None = None) -> _ScriptedStream:
        text = self.texts[min(self.turns, len(self.texts) - 1)]
        self.turns += 1
        if isinstance(text, Exception):
            raise text
        return _ScriptedStream(text)

    async def warm_up(self) -> None:
        return None


def scripted_listeners(texts: list[str | Exception], **settings: Any) -> Any:
    """A ``listener_factory``: the library's Listener with :class:`LoudnessVad` and the scripted texts; a
    tone's turn ends by the silence timer (a turn-end model judges speech, not tones)."""
    from strands_voice.listen import Listener, ListenSettings

    recognizer = ScriptedRecognizer(texts)

    async def open_listener(_start: Any) -> Any:
        listen = ListenSettings(**{"end_of_turn": "silence", **settings})
        return Listener(listen, vad=LoudnessVad(), recognizer=recognizer, turn_model=None)

    return open_listener


@dataclass
class Caller:
    """One ``/ws`` call (see the module docstring)."""

    socket: ClientConnection
    events: list[dict[str, Any]] = field(default_factory=list)
    audio: list[tuple[float, bytes]] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # "audio" or the event type, in arrival order
    times: list[float] = field(default_factory=list)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    _reader: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, url: str, *, headers: dict[str, str] | None = None) -> Caller:
        socket = await connect(url, additional_headers=headers, max_size=None)
        caller = cls(socket)
        caller._reader = asyncio.create_task(caller._read())
        return caller

    @classmethod
    async def listening(cls, url: str) -> Caller:
        """A call opened and started (``START``), once the app answered ``listening``."""
        caller = await cls.open(url)
        await caller.send(START)
        await caller.wait_for("listening")
        return caller

    async def _read(self) -> None:
        try:
            async for message in self.socket:
                now = time.monotonic()
                if isinstance(message, bytes):
                    self.audio.append((now, message))
                    self.order.append("audio")
                else:
                    self.events.append(json.loads(message))
                    self.order.append(self.events[-1]["type"])
                self.times.append(now)
        except Exception:  # the server closed without a close frame: the test checks what arrived
            pass
        finally:
            self.closed.set()

    async def send(self, message: dict[str, Any]) -> None:
        await self.socket.send(json.dumps(message))

    async def speak(self, pcm: bytes, *, realtime: bool = True, frame_s: float = 0.02) -> None:
        """Send ``pcm`` as microphone frames, paced at real time unless told."""
        start = time.perf_counter()
        for index, frame in enumerate(frames(pcm, frame_s)):
            await self.socket.send(frame)
            if realtime:
                await asyncio.sleep(max(0.0, start + (index + 1) * frame_s - time.perf_counter()))

    async def wait_for(self, kind: str, count: int = 1, within_s: float = 30.0) -> dict[str, Any]:
        """The ``count``-th event of type ``kind`` (waits for it)."""
        deadline = time.monotonic() + within_s
        while True:
            found = [e for e in self.events if e["type"] == kind]
            if len(found) >= count:
                return found[count - 1]
            if self.closed.is_set() or time.monotonic() > deadline:
                seen = [e for e in self.events if e["type"] not in ("text_delta", "sentence_complete")]
                raise AssertionError(f"no {kind} #{count}; got {self.order}; events {seen}")
            await asyncio.sleep(0.01)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def story(self) -> str:
        """What arrived, for a failing assert: each event (not text deltas) with its time from the first
        arrival, each run of audio as one line with its length."""
        lines: list[str] = []
        events, audio = iter(self.events), iter(self.audio)
        start = self.times[0] if self.times else 0.0
        run_bytes = 0
        for kind, at in zip(self.order, self.times, strict=True):
            if kind == "audio":
                run_bytes += len(next(audio)[1])
                continue
            if run_bytes:
                lines.append(f"  audio {run_bytes / 32000:.1f} s")
                run_bytes = 0
            event = next(events)
            if kind not in ("text_delta", "sentence_complete", "words"):
                shown = {k: v for k, v in event.items() if k not in ("type", "timestamps")}
                lines.append(f"{at - start:7.2f} {kind} {json.dumps(shown, ensure_ascii=False)[:160]}")
        if run_bytes:
            lines.append(f"  audio {run_bytes / 32000:.1f} s")
        return "\n".join(lines)

    async def close(self) -> None:
        await self.socket.close()
        await asyncio.wait_for(self.closed.wait(), 10.0)
