"""Support for the cascade tests and the bench: a stand-in model that scripts turns, a paced microphone, a
recorder of the agent's output."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, field
from typing import Any

from strands.bidi.types.events import BidiAudioDeltaEvent, BidiOutputEvent
from strands.bidi.types.media import AudioDelta
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.audio.resample import resample_linear

from support.spoken import LISTEN_RATE
from support.stand_in_model import StandInModel

__all__ = ["Mic", "Recorder", "Turn", "TurnModel", "heard_16k"]


@dataclass
class Turn:
    """One scripted model turn: its words (streamed word by word), then maybe one tool call."""

    text: str
    tool: tuple[str, dict[str, Any]] | None = None
    word_s: float = 0.05


class TurnModel(StandInModel):
    """Answers each call with the next :class:`Turn`; keeps the messages each call was given."""

    def __init__(self, turns: list[Turn]) -> None:
        super().__init__("turn-model")
        self.turns = list(turns)
        self.calls: list[Messages] = []

    async def stream(  # type: ignore[override]
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        self.calls.append(messages)
        turn = self.turns.pop(0) if self.turns else Turn("I have nothing more to add.")
        yield {"messageStart": {"role": "assistant"}}
        for word in turn.text.split(" "):
            await asyncio.sleep(turn.word_s)
            yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
        yield {"contentBlockStop": {}}
        if turn.tool is not None:
            name, tool_input = turn.tool
            tool_use_id = f"call-{len(self.calls)}"
            yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_use_id}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": _json(tool_input)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if turn.tool else "end_turn"}}


def _json(value: dict[str, Any]) -> str:
    import json

    return json.dumps(value)


class Mic:
    """An input stream: scheduled utterances at real-time speed, silence in between (20 ms frames).

    ``say(pcm16)`` queues an utterance (16 kHz PCM16); it starts at the next frame.
    """

    def __init__(self, frame_s: float = 0.02) -> None:
        self._frame = 2 * round(frame_s * LISTEN_RATE)
        self._frame_s = frame_s
        self._pending = bytearray()
        self._next: float | None = None
        self.said_at: list[float] = []  # perf_counter when each utterance started
        self.ended_at: list[float] = []  # perf_counter when each utterance's last frame was sent
        self._ends: list[int] = []

    def say(self, pcm16: bytes) -> None:
        self.said_at.append(time.perf_counter())
        self._pending += pcm16
        self._ends.append(len(self._pending))

    async def start(self, agent: Any) -> None:
        self._next = time.perf_counter()

    async def stop(self) -> None:
        return None

    async def __call__(self) -> AudioDelta:
        assert self._next is not None
        self._next += self._frame_s
        await asyncio.sleep(max(0.0, self._next - time.perf_counter()))
        frame = bytes(self._pending[: self._frame]).ljust(self._frame, b"\0")
        del self._pending[: self._frame]
        self._ends = [end - self._frame for end in self._ends]
        while self._ends and self._ends[0] <= 0:
            self._ends.pop(0)
            self.ended_at.append(time.perf_counter())
        return AudioDelta(format="pcm", source={"bytes": frame})


@dataclass
class Recorder:
    """An output stream: every event with its ``perf_counter`` time; ``until(predicate)`` waits for one."""

    events: list[tuple[float, BidiOutputEvent]] = field(default_factory=list)
    _waiters: list[tuple[Callable[[BidiOutputEvent], bool], asyncio.Future[float]]] = field(
        default_factory=list
    )

    async def start(self, agent: Any) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def __call__(self, event: BidiOutputEvent) -> None:
        now = time.perf_counter()
        self.events.append((now, event))
        for predicate, future in list(self._waiters):
            if not future.done() and predicate(event):
                future.set_result(now)

    async def until(self, predicate: Callable[[BidiOutputEvent], bool], within_s: float) -> float:
        """The time of the first event (from now on) ``predicate`` accepts (at most ``within_s`` away)."""
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiters.append((predicate, future))
        return await asyncio.wait_for(future, within_s)

    async def until_audio(self, content_id_prefix: str, seconds: float, within_s: float) -> float:
        """The time when ``seconds`` of audio (24 kHz pcm16) of ``content_id_prefix`` had arrived."""
        size = 2 * round(seconds * 24000)
        return await self.until(
            lambda event: (
                isinstance(event, BidiAudioDeltaEvent) and len(self.audio(content_id_prefix)) >= size
            ),
            within_s,
        )

    def audio(self, content_id_prefix: str = "", before: float = float("inf")) -> bytes:
        """The PCM16 (24 kHz) of the audio deltas received before ``before``."""
        return b"".join(
            base64.b64decode(event.audio)
            for at, event in self.events
            if isinstance(event, BidiAudioDeltaEvent)
            and at < before
            and event.content_id.startswith(content_id_prefix)
        )


def heard_16k(pcm24: bytes) -> bytes:
    """Agent audio (24 kHz) at Whisper's 16 kHz."""
    return resample_linear(pcm24, 24000, LISTEN_RATE)
