"""A phone line (Twilio Media Streams) as a call's connection: the same call as ``/ws``, another codec.

:class:`PhoneLine` is a :class:`~agentcore_app.call._socket.CallSocket`: the call reads and writes it as
it would a ``/ws`` caller, and knows nothing of Twilio. In, Twilio's frames go through the protocol's codec
(:class:`~strands_voice_protocol.telephony.twilio.TwilioStream`): ``start`` becomes the call's Leg 3
``start`` (``format: mulaw``, so the answers are made as 8 kHz μ-law; ``voice`` and ``lang`` from the
TwiML parameters when given), ``media`` the caller's pcm16 at 16 kHz
(:class:`~strands_voice_protocol.telephony.phone_audio.PhoneToCall`), ``mark`` tells the playback and the
call what the phone played (what was heard is what the phone confirmed: the answer's playback count is set
to the end of each confirmed sentence and runs at real time only up to the next one's end), ``stop`` ends
the call. Out, the call's frames go through
:class:`~agentcore_app.call._phone_playback.PhonePlayback` (media, marks, ``clear``).

Keys (``dtmf``): digits are collected until ``#``, which sends them as a typed turn (``keypad: 1234``);
``*`` drops the digits collected. A ``#`` with no digits does nothing.

A frame that breaks the protocol ends the call as a hang-up would (the answer being spoken is interrupted,
the agent remembers what was heard), then the stream is closed with the codec's code and reason.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final

from starlette import status
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState
from strands_voice_protocol.telephony import twilio
from strands_voice_protocol.telephony.phone_audio import PhoneToCall

from agentcore_app.conversation import validate_session_id

from ..payload import PayloadError, parse_call_start
from ._phone_playback import PhonePlayback

__all__ = ["KEYPAD_PREFIX", "MAX_DIGITS", "PhoneLine", "TwilioWire"]

logger = logging.getLogger(__name__)

#: The typed turn a keypad entry becomes: this, then the digits.
KEYPAD_PREFIX: Final = "keypad: "
#: Digits kept before ``#`` (more are dropped).
MAX_DIGITS: Final = 32
#: The TwiML ``<Parameter>`` names passed on to the call's ``start`` (``session_id`` names the conversation).
START_PARAMETERS: Final = ("voice", "lang")
_DISCONNECT: Final = {"type": "websocket.disconnect", "code": status.WS_1000_NORMAL_CLOSURE}


@dataclass(frozen=True)
class TwilioWire:
    """Twilio's frames out for one stream (a :class:`~agentcore_app.call._phone_playback.PhoneWire`)."""

    stream_sid: str

    def media(self, payload: bytes) -> str:
        return twilio.media(self.stream_sid, payload)

    def mark(self, name: str) -> str:
        return twilio.mark(self.stream_sid, name)

    def clear(self) -> str:
        return twilio.clear(self.stream_sid)


class PhoneLine:
    """One Twilio stream, started, as a call's connection (see the module docstring).

    Attributes:
        started: The stream's ``start``.
        session_id: The conversation its ``session_id`` parameter names (None: none named).
        playback: What the phone plays.
        error: The protocol error that ended the call (None: none).
        stopped: Twilio said ``stop``.
    """

    def __init__(self, websocket: WebSocket, stream: twilio.TwilioStream, started: twilio.Started) -> None:
        self.websocket = websocket
        self.stream = stream
        self.started = started
        self.session_id = started.custom_parameters.get("session_id") or None
        self.playback = PhonePlayback(TwilioWire(started.stream_sid))
        self.error: twilio.TwilioProtocolError | None = None
        self.stopped = False
        #: Told of each sentence the phone confirmed it played (its answer's ``request_id``, its index).
        self.on_played: Callable[[str, int], None] | None = None
        self._to_call = PhoneToCall()
        self._start: str | None = json.dumps(_start_frame(started))
        self._digits = ""

    @classmethod
    async def answer(cls, websocket: WebSocket, first: str | None, wait_s: float) -> PhoneLine | None:
        """Read Twilio's frames up to ``start`` (``first``: the one already read); None when the stream
        ended or broke the protocol before it (closed with the reason)."""
        stream = twilio.TwilioStream()
        try:
            while True:
                text = first if first is not None else await _next_text(websocket, wait_s)
                first = None
                if text is None:
                    return None
                event = stream.receive(text)
                if isinstance(event, twilio.Started):
                    parse_call_start({k: v for k, v in _start_frame(event).items() if k != "type"})
                    if event.custom_parameters.get("session_id"):
                        validate_session_id(event.custom_parameters["session_id"])
                    return cls(websocket, stream, event)
        except twilio.TwilioProtocolError as error:
            await _close(websocket, error.code, error.reason)
        except PayloadError as error:  # a refused session id too
            await _close(websocket, status.WS_1008_POLICY_VIOLATION, error.message)
        except TimeoutError:
            await _close(websocket, status.WS_1008_POLICY_VIOLATION, "no 'start' came")
        return None

    @property
    def application_state(self) -> WebSocketState:
        return self.websocket.application_state

    async def receive(self) -> MutableMapping[str, Any]:
        """The call's next message: its ``start`` first, then the caller's audio and keypad turns."""
        if self._start is not None:
            start, self._start = self._start, None
            return {"type": "websocket.receive", "text": start}
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return message
            try:
                text = message.get("text")
                if text is None:
                    raise twilio.TwilioStream.binary()
                event = self.stream.receive(text)
            except twilio.TwilioProtocolError as error:
                logger.warning(
                    "call_sid=<%s>, reason=<%s> | the phone line broke", self.started.call_sid, error
                )
                self.error = error
                return dict(_DISCONNECT)
            found = self._take(event)
            if found is not None:
                return found

    def _take(self, event: twilio.TwilioEvent) -> MutableMapping[str, Any] | None:
        """What the call gets of one of Twilio's events (None: nothing)."""
        if isinstance(event, twilio.Media):
            pcm = self._to_call.convert(event.payload)
            return {"type": "websocket.receive", "bytes": pcm} if pcm else None
        if isinstance(event, twilio.Mark):
            played = self.playback.played(event.name)
            if played is not None and self.on_played is not None:
                self.on_played(*played)
        elif isinstance(event, twilio.Dtmf):
            prompt = self._key(event.digit)
            if prompt is not None:
                return {"type": "websocket.receive", "text": json.dumps({"type": "prompt", "prompt": prompt})}
        elif isinstance(event, twilio.Stopped):
            logger.debug("call_sid=<%s> | the phone hung up", self.started.call_sid)
            self.stopped = True
            return dict(_DISCONNECT)
        return None

    def _key(self, digit: str) -> str | None:
        """A key pressed; the typed turn it completes (``#``), if any."""
        if digit == "#":
            digits, self._digits = self._digits, ""
            return f"{KEYPAD_PREFIX}{digits}" if digits else None
        if digit == "*":
            self._digits = ""
        elif len(self._digits) < MAX_DIGITS:
            self._digits += digit[:1]
        return None

    async def send_bytes(self, data: bytes) -> None:
        """The answer's audio (μ-law, the call's format) to the phone."""
        for frame in self.playback.audio(data):
            await self.websocket.send_text(frame)

    async def send_text(self, data: str) -> None:
        """One of the call's events: what it means for the phone (most mean nothing to it)."""
        event = json.loads(data)
        if event.get("type") == "error":
            logger.debug("call_sid=<%s>, code=<%s> | call error", self.started.call_sid, event.get("code"))
        for frame in self.playback.event(event):
            await self.websocket.send_text(frame)

    async def close(self, code: int = status.WS_1000_NORMAL_CLOSURE, reason: str | None = None) -> None:
        """Close the stream: with the protocol error's code and reason when one ended the call."""
        if self.error is not None:
            code, reason = self.error.code, self.error.reason
        try:
            await self.websocket.close(code, reason)
        except WebSocketDisconnect:
            pass  # Twilio closed first (after ``stop``)


def _start_frame(started: twilio.Started) -> dict[str, Any]:
    """The call's Leg 3 ``start`` for this stream."""
    chosen = {k: v for k, v in started.custom_parameters.items() if k in START_PARAMETERS and v}
    return {"type": "start", "format": "mulaw", **chosen}


async def _next_text(websocket: WebSocket, wait_s: float) -> str | None:
    """The next text frame (None: the stream ended); a binary frame breaks the protocol."""
    message = await asyncio.wait_for(websocket.receive(), wait_s)
    if message["type"] == "websocket.disconnect":
        return None
    text = message.get("text")
    if text is None:
        raise twilio.TwilioStream.binary()
    return str(text)


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    logger.warning("code=<%d>, reason=<%s> | a phone stream was refused", code, reason)
    try:
        await websocket.close(code, reason)
    except (OSError, RuntimeError):
        pass  # already gone
