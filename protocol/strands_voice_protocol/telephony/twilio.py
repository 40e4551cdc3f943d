"""Twilio Media Streams (bidirectional, ``<Connect><Stream>``) as a sans-I/O codec.

In: :meth:`TwilioStream.receive` reads one text frame from Twilio into a typed event (:class:`Connected`,
:class:`Started`, :class:`Media` with its payload decoded, :class:`Mark`, :class:`Dtmf`, :class:`Stopped`)
or raises :class:`TwilioProtocolError`, which carries the WebSocket close code and the reason to close the
stream with (docs/PROTOCOL.md, "Phone line"):

- 1003 (data the server cannot take): a frame that is not a JSON object, a binary frame, a payload that is
  not base64, a media format other than μ-law at 8,000 Hz mono;
- 1008 (the protocol broken): an unknown ``event``, ``media`` before ``start``, a second ``start``, a
  message without its fields, a payload over one second of audio.

Out: :func:`media`, :func:`mark` and :func:`clear` write the frames the server sends back, each for the
stream's ``streamSid``. :func:`is_media_stream_frame` tells a Twilio stream's first frame from a Leg 3
``start`` (the app's ``/ws`` takes both).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "CLOSE_PROTOCOL",
    "CLOSE_UNSUPPORTED",
    "ENCODING",
    "MAX_PAYLOAD_BYTES",
    "Connected",
    "Dtmf",
    "Mark",
    "Media",
    "MediaFormat",
    "Started",
    "Stopped",
    "TwilioEvent",
    "TwilioProtocolError",
    "TwilioStream",
    "clear",
    "is_media_stream_frame",
    "mark",
    "media",
]

#: Close code for data the server cannot take (RFC 6455 "unsupported data").
CLOSE_UNSUPPORTED: Final = 1003
#: Close code for a broken protocol (RFC 6455 "policy violation").
CLOSE_PROTOCOL: Final = 1008
#: The only media format of Twilio Media Streams.
ENCODING: Final = "audio/x-mulaw"
_RATE: Final = 8000
#: The largest ``media`` payload taken: one second of μ-law (Twilio sends 20 ms).
MAX_PAYLOAD_BYTES: Final = _RATE
_EVENTS: Final = ("connected", "start", "media", "mark", "dtmf", "stop")


class TwilioProtocolError(Exception):
    """The stream broke the protocol: close it with ``code`` and ``reason`` (at most 123 bytes).

    Attributes:
        code: The WebSocket close code (1003 or 1008).
        reason: What was wrong, for the close frame and the log.
    """

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason.encode()[:123].decode(errors="ignore")


@dataclass(frozen=True)
class MediaFormat:
    """The stream's audio (``start.mediaFormat``)."""

    encoding: str
    sample_rate: int
    channels: int


@dataclass(frozen=True)
class Connected:
    """The socket is open (Twilio's first message); nothing to do yet."""


@dataclass(frozen=True)
class Started:
    """The call begins.

    Attributes:
        stream_sid: The stream's id (every frame out names it).
        call_sid: The call's id.
        custom_parameters: The TwiML ``<Parameter>`` values (``session_id`` names the conversation).
        media_format: The caller's audio (always μ-law at 8 kHz mono, or the stream is refused).
    """

    stream_sid: str
    call_sid: str
    custom_parameters: dict[str, str] = field(default_factory=dict)
    media_format: MediaFormat = MediaFormat(ENCODING, _RATE, 1)


@dataclass(frozen=True)
class Media:
    """The caller's audio: ``payload`` is μ-law bytes at 8 kHz, in order."""

    payload: bytes


@dataclass(frozen=True)
class Mark:
    """The phone has played every ``media`` sent before the server's mark named ``name`` (or dropped
    it on a ``clear``)."""

    name: str


@dataclass(frozen=True)
class Dtmf:
    """A key pressed on the phone (``0``-``9``, ``*``, ``#``)."""

    digit: str


@dataclass(frozen=True)
class Stopped:
    """The call ended."""


TwilioEvent = Connected | Started | Media | Mark | Dtmf | Stopped


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TwilioProtocolError(CLOSE_PROTOCOL, f"'{where}' must be an object")
    return value


def _string(container: dict[str, Any], key: str, where: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value:
        raise TwilioProtocolError(CLOSE_PROTOCOL, f"'{where}.{key}' must be a non-empty string")
    return value


class TwilioStream:
    """One Twilio Media Stream's frames in (see the module docstring).

    Attributes:
        started: The stream's ``start`` (None before it).
    """

    def __init__(self) -> None:
        self.started: Started | None = None

    def receive(self, text: str) -> TwilioEvent:
        """The event of one text frame from Twilio.

        Raises:
            TwilioProtocolError: The frame breaks the protocol (close with its code and reason).
        """
        try:
            message = json.loads(text)
        except (json.JSONDecodeError, RecursionError):
            raise TwilioProtocolError(CLOSE_UNSUPPORTED, "a frame must be one JSON object") from None
        if not isinstance(message, dict):
            raise TwilioProtocolError(CLOSE_UNSUPPORTED, "a frame must be one JSON object")
        event = message.get("event")
        if event is None:
            raise TwilioProtocolError(CLOSE_PROTOCOL, "a frame needs an 'event' field")
        if event not in _EVENTS:
            raise TwilioProtocolError(CLOSE_PROTOCOL, f"unknown event {str(event)[:40]!r}")
        if event == "connected":
            return Connected()
        if event == "start":
            return self._start(message)
        if self.started is None:
            raise TwilioProtocolError(CLOSE_PROTOCOL, f"'{event}' before 'start'")
        if event == "media":
            return Media(_payload(_object(message.get("media"), "media")))
        if event == "mark":
            return Mark(_string(_object(message.get("mark"), "mark"), "name", "mark"))
        if event == "dtmf":
            return Dtmf(_string(_object(message.get("dtmf"), "dtmf"), "digit", "dtmf"))
        return Stopped()

    @staticmethod
    def binary() -> TwilioProtocolError:
        """The error for a binary frame (Twilio sends text frames only)."""
        return TwilioProtocolError(CLOSE_UNSUPPORTED, "Twilio Media Streams send text frames only")

    def _start(self, message: dict[str, Any]) -> Started:
        if self.started is not None:
            raise TwilioProtocolError(CLOSE_PROTOCOL, "a second 'start'")
        start = _object(message.get("start"), "start")
        parameters = start.get("customParameters") or {}
        if not isinstance(parameters, dict) or not all(isinstance(v, str) for v in parameters.values()):
            raise TwilioProtocolError(CLOSE_PROTOCOL, "'start.customParameters' must map names to strings")
        media_format = _media_format(start.get("mediaFormat"))
        stream_sid = start.get("streamSid") or message.get("streamSid")
        if not isinstance(stream_sid, str) or not stream_sid:
            raise TwilioProtocolError(CLOSE_PROTOCOL, "'start.streamSid' must be a non-empty string")
        self.started = Started(stream_sid, _string(start, "callSid", "start"), dict(parameters), media_format)
        return self.started


def _media_format(value: Any) -> MediaFormat:
    """``start.mediaFormat``, which must be μ-law at 8 kHz mono (absent: Twilio's only format)."""
    if value is None:
        return MediaFormat(ENCODING, _RATE, 1)
    found = _object(value, "start.mediaFormat")
    media_format = MediaFormat(
        str(found.get("encoding")), _whole(found.get("sampleRate")), _whole(found.get("channels", 1))
    )
    if media_format != MediaFormat(ENCODING, _RATE, 1):
        raise TwilioProtocolError(
            CLOSE_UNSUPPORTED,
            f"the stream must be {ENCODING} at {_RATE} Hz mono, not {media_format.encoding[:30]} at "
            f"{media_format.sample_rate} Hz, {media_format.channels} channels",
        )
    return media_format


def _whole(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1


def _payload(found: dict[str, Any]) -> bytes:
    payload = found.get("payload")
    if not isinstance(payload, str):
        raise TwilioProtocolError(CLOSE_PROTOCOL, "'media.payload' must be a base64 string")
    if len(payload) > 4 * (MAX_PAYLOAD_BYTES // 3 + 1):
        raise TwilioProtocolError(CLOSE_PROTOCOL, "a media payload holds at most one second of audio")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise TwilioProtocolError(CLOSE_UNSUPPORTED, "'media.payload' is not base64") from None
    if len(data) > MAX_PAYLOAD_BYTES:
        raise TwilioProtocolError(CLOSE_PROTOCOL, "a media payload holds at most one second of audio")
    return data


# --- out ------------------------------------------------------------------------------------------------


def media(stream_sid: str, payload: bytes) -> str:
    """A ``media`` frame: ``payload`` (μ-law at 8 kHz) for the phone to play after what it has."""
    body = {"payload": base64.b64encode(payload).decode("ascii")}
    return json.dumps({"event": "media", "streamSid": stream_sid, "media": body})


def mark(stream_sid: str, name: str) -> str:
    """A ``mark`` frame: Twilio returns it once the phone has played the media sent before it."""
    return json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}})


def clear(stream_sid: str) -> str:
    """A ``clear`` frame: the phone drops the audio it has not played."""
    return json.dumps({"event": "clear", "streamSid": stream_sid})


def is_media_stream_frame(text: str) -> bool:
    """Whether a stream's first text frame is Twilio's (a JSON object with ``event`` ``connected`` or
    ``start``) rather than Leg 3's ``{"type": "start"}``."""
    try:
        message = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return (
        isinstance(message, dict) and "type" not in message and message.get("event") in ("connected", "start")
    )
