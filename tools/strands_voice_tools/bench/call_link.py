"""The caller's end of a spoken call over a WebSocket in the ``/ws`` call's words.

:class:`CallLink` sends ``start`` and waits for ``listening``, then plays a microphone at real time:
20 ms PCM16 frames at 16 kHz, continuously, silence between the utterances (the pacing of
:class:`~strands_voice_tools.talk.streams.PacedInput`: a frame leaves when its audio has ended). It keeps
every JSON event and binary audio frame that comes back with its arrival time, in a
:class:`~.call_log.CallLog` on the microphone's clock (``time.perf_counter``). The strands-voice app's
``/ws``, :mod:`.peer_strands`' cascade and :mod:`.peer_pipecat`'s pipeline all speak this.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any, Final

from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.call_events import ends_turn
from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.bench.call_log import (
    CallLog,
    Utterance,
    answer_playing,
    first_heard_at,
    play,
)
from strands_voice_tools.bench.turn_set import Said
from strands_voice_tools.talk.streams import LISTEN_RATE, PacedInput

__all__ = ["START", "CallLink"]

START: Final = {"type": "start", "sample_rate": LISTEN_RATE}
_POLL_S: Final = 0.05
#: How long a turn the system took may go unanswered before the call goes on without its answer.
PENDING_S: Final = 20.0


class CallLink:
    """One call (see the module docstring); :meth:`open` it, :meth:`close` it."""

    def __init__(self, socket: Any) -> None:
        self.log = CallLog()
        self.mic = PacedInput()
        self._socket = socket
        self._listening = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    async def open(cls, url: str, within_s: float = 60.0, lang: str | None = None) -> CallLink:
        """Connect, send ``start`` (with ``lang``, the caller's and the answers' language, when given),
        wait for ``listening``, start the microphone.

        Raises:
            StrandsVoiceError: no ``listening`` within ``within_s``.
        """
        from websockets.asyncio.client import connect

        link = cls(await connect(url, max_size=None))
        link._tasks.append(asyncio.create_task(link._read()))
        await link._socket.send(json.dumps({**START, **({"lang": lang} if lang else {})}))
        try:
            await asyncio.wait_for(link._listening.wait(), within_s)
        except TimeoutError:
            await link.close()
            raise StrandsVoiceError(
                f"{url} did not answer start with listening within {within_s:.0f} s"
            ) from None
        await link.mic.start(None)
        link._tasks.append(asyncio.create_task(link._send()))
        return link

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):  # the system hung up: the log keeps what came
            await self._read_messages()

    async def _read_messages(self) -> None:
        async for message in self._socket:
            now = time.perf_counter()
            if isinstance(message, bytes):
                self.log.audio.append((now, message))
                continue
            event = json.loads(message)
            self.log.events.append((now, event))
            if event.get("type") == "listening":
                self._listening.set()

    async def _send(self) -> None:
        while True:
            delta = await self.mic()
            await self._socket.send(delta.source["bytes"])

    async def say(self, said: Said) -> Utterance:
        """Say ``said`` (one utterance at a time); returns it once said, with its first and last sound."""
        spoken = len(self.mic.spoke)
        self.mic.say(said.pcm16)
        await self.mic.idle.wait()
        start, end = self.mic.spoke[spoken]
        utterance = Utterance(said.kind, said.text, said.voice, start, end)
        self.log.said.append(utterance)
        return utterance

    async def heard(self, after: float, within_s: float) -> float | None:
        """When the first audible sound of audio arriving after ``after`` plays (None: none within)."""
        deadline = time.perf_counter() + within_s
        while time.perf_counter() < deadline:
            at = first_heard_at(self.log, after, float("inf"))
            if at is not None:
                return at
            await asyncio.sleep(_POLL_S)
        return None

    def playing(self) -> bool:
        """Whether an answer is playing now (:func:`.call_log.answer_playing`)."""
        return answer_playing(play(self.log), time.perf_counter())

    async def quiet(self, quiet_s: float, within_s: float, pending_s: float = PENDING_S) -> bool:
        """Wait until nothing has played or arrived for ``quiet_s`` and the last turn the system took has
        been answered (or ``pending_s`` has passed without its answer); False when ``within_s`` ran out."""
        deadline = time.perf_counter() + within_s
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            spans = play(self.log)
            last = max([end for _, end in spans] + [at for at, _ in self.log.audio[-1:]] + [0.0])
            turn = max([at for at, event in self.log.events if ends_turn(event)] + [0.0])
            answered = last > turn or now - turn >= pending_s
            if answered and now - last >= quiet_s and not any(start <= now < end for start, end in spans):
                return True
            await asyncio.sleep(_POLL_S)
        return False

    async def close(self) -> CallLog:
        """Stop the microphone, hang up, and return the call's log."""
        await cancel_and_wait(self._tasks, 5.0)
        await self._socket.close()
        self.log.ended = time.perf_counter()
        return self.log
