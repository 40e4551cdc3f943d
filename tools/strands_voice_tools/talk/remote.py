"""``strands-voice talk --runtime-arn``: the laptop conversation held with a deployed app over its ``/ws``.

:class:`RuntimeCall` is the agent's side of ``talk`` when the agent runs elsewhere: the same input streams
(the microphone, or the paced WAV) and output streams (the speakers and the status line, or the answer
recorder) as the local ``BidiAgent``, joined to a WebSocket in the ``/ws`` call's words instead of to a
model. What the socket sends becomes ``strands.bidi`` output events (binary audio → audio deltas,
``agent_start``/``agent_end`` → response start/stop, ``interrupted`` → a barge-in, final transcripts that
are turns (not a backchannel over the answer: ``counts: false``) and each answer's text → transcript
blocks), so the outputs cannot tell a deployed agent from a local one.
Microphone audio goes up as binary frames, none over AgentCore's 32 KB. One session id names the
conversation for the whole run (``--session-id`` continues an earlier one).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiBargeInEvent,
    BidiOutputEvent,
    BidiResponseStartEvent,
    BidiResponseStopEvent,
    BidiTranscriptBlockEvent,
)
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.call_events import ends_turn
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice_tools.runtime.connect import FRAME_LIMIT
from strands_voice_tools.talk.streams import LISTEN_RATE

__all__ = ["RuntimeCall", "split_frames"]

logger = logging.getLogger(__name__)

_GRACE_S: Final = 5.0


def split_frames(audio: bytes, limit: int = FRAME_LIMIT) -> list[bytes]:
    """``audio`` in frames of at most ``limit`` bytes (an even number: PCM16 samples stay whole)."""
    step = limit - limit % 2
    return [audio[offset : offset + step] for offset in range(0, len(audio), step)] or [b""]


class RuntimeCall:
    """One call on a ``/ws`` socket with ``BidiAgent``-style inputs and outputs (module docstring).

    Args:
        socket: An open ``websockets`` client connection to the app's ``/ws``.
        inputs: Input streams: each call returns the next ``AudioDelta`` (16 kHz PCM16).
        outputs: Output streams: each is called with every output event.
    """

    def __init__(self, socket: Any, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        self._socket = socket
        self._inputs = list(inputs)
        self._outputs = list(outputs)
        self._listening = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._rate = SAMPLE_RATE
        self._request = ""
        self._text: list[str] | None = []  # None: the answer was interrupted (its heard part was shown)
        self.errors: list[dict[str, Any]] = []

    async def start(self, settings: dict[str, Any], within_s: float = 60.0) -> None:
        """Send ``start`` (with ``settings``), wait for ``listening``, then start the streams.

        Raises:
            StrandsVoiceError: no ``listening`` within ``within_s``, or the call closed first.
        """
        self._tasks.append(asyncio.create_task(self._read(), name="runtime-call-read"))
        await self._socket.send(json.dumps({**settings, "type": "start", "sample_rate": LISTEN_RATE}))
        waiting = asyncio.create_task(self._listening.wait())
        done, _ = await asyncio.wait(
            [waiting, self._tasks[0]], timeout=within_s, return_when="FIRST_COMPLETED"
        )
        if waiting not in done:
            await cancel_and_wait([waiting, *self._tasks], _GRACE_S)
            raise StrandsVoiceError(self._no_listening(within_s))
        for stream in [*self._inputs, *self._outputs]:
            await stream.start(None)
        for index, stream in enumerate(self._inputs):
            self._tasks.append(asyncio.create_task(self._send(stream), name=f"runtime-call-send-{index}"))

    def _no_listening(self, within_s: float) -> str:
        received = self._socket.protocol.close_rcvd
        if received is not None:
            return f"the runtime closed the call before listening (code {received.code}: {received.reason})"
        return f"the runtime did not answer start with listening within {within_s:.0f} s"

    async def wait_closed(self) -> None:
        """Until the runtime ends the call."""
        await asyncio.shield(self._tasks[0])

    async def close(self) -> None:
        """Hang up (an answer still speaking is interrupted; the app keeps what was heard)."""
        await cancel_and_wait(self._tasks[1:], _GRACE_S)
        with contextlib.suppress(Exception):  # already closed by the runtime: nothing to hang up
            await asyncio.wait_for(self._socket.close(1000, "hang up"), _GRACE_S)
        await cancel_and_wait(self._tasks[:1], _GRACE_S)
        for stream in [*self._inputs, *self._outputs]:
            await stream.stop()

    async def _send(self, stream: Any) -> None:
        while True:
            delta = await stream()
            for frame in split_frames(bytes(delta.source["bytes"])):
                await self._socket.send(frame)

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):  # the runtime hung up: the call is over
            async for message in self._socket:
                for event in self._events(message):
                    for output in self._outputs:
                        await output(event)

    def _events(self, message: str | bytes) -> list[BidiOutputEvent]:
        if isinstance(message, bytes):
            audio = base64.b64encode(message).decode()
            return [BidiAudioDeltaEvent(audio, "pcm", self._rate, 1, self._request)]
        event = json.loads(message)
        return self._translate(event)

    def _translate(self, event: dict[str, Any]) -> list[BidiOutputEvent]:
        kind = event.get("type")
        if kind == "listening":
            self._listening.set()
        elif ends_turn(event):
            return [BidiTranscriptBlockEvent(str(event.get("text", "")), "user", self._request)]
        elif kind == "agent_start":
            self._request, self._text = str(event.get("request_id", "")), []
            return [BidiResponseStartEvent(self._request)]
        elif kind == "text_delta" and self._text is not None:
            self._text.append(str(event.get("text", "")))
        elif kind == "audio_start":
            self._rate = int(event.get("sample_rate", SAMPLE_RATE))
        elif kind == "interrupted":
            heard, self._text = str(event.get("heard_text", "")), None
            return [BidiBargeInEvent(), BidiTranscriptBlockEvent(heard, "assistant", self._request)]
        elif kind == "agent_end":
            stop = BidiResponseStopEvent(self._request)
            if self._text is None:
                return [stop]
            return [BidiTranscriptBlockEvent("".join(self._text).strip(), "assistant", self._request), stop]
        elif kind == "error":
            self.errors.append(event)
            print(f"runtime error: {event.get('code')}: {event.get('message')}", file=sys.stderr, flush=True)
        return []
