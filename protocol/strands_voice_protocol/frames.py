"""Leg 1 frame codec (sans-I/O): typed messages for every row of PROTOCOL.md, and their encoding.

Client → server: :class:`Synthesize`, :class:`Cancel`, :class:`Close`.
Server → client: :class:`SynthesisStart`, audio bytes, :class:`WordTimestamps` (when asked),
:class:`SynthesisComplete`, :class:`SynthesisCancelled`, :class:`ErrorFrame`.

Control frames are UTF-8 JSON objects. Where a transport does not keep frame kinds, a chunk is a control
frame only if the WHOLE chunk decodes as UTF-8 JSON to an object (see :func:`is_control_frame`); raw PCM
that happens to begin with ``{`` stays audio.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, get_args

from strands_voice_protocol._utf8 import json_utf8
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = [
    "DEFAULT_CHANNELS",
    "DEFAULT_FORMAT",
    "DEFAULT_SAMPLE_RATE",
    "ERROR_CODES",
    "Cancel",
    "ClientMessage",
    "Close",
    "ErrorCode",
    "ErrorFrame",
    "Keepalive",
    "ServerMessage",
    "SynthesisCancelled",
    "SynthesisComplete",
    "SynthesisStart",
    "Synthesize",
    "WordTimestamps",
    "WordTiming",
    "decode_client_message",
    "decode_lexicon",
    "decode_server_control",
    "decode_server_frame",
    "encode_client_message",
    "encode_server_message",
    "is_control_frame",
    "words_json",
]

DEFAULT_FORMAT: Final = "pcm16"
DEFAULT_SAMPLE_RATE: Final = SAMPLE_RATE
DEFAULT_CHANNELS: Final = 1

ErrorCode = Literal[
    "invalid_json",
    "invalid_request",
    "text_too_long",
    "unknown_voice",
    "unsupported_language",
    "busy",
    "internal",
]
ERROR_CODES: Final[frozenset[str]] = frozenset(get_args(ErrorCode))


@dataclass(frozen=True, slots=True)
class Synthesize:
    """Synthesize one chunk of text: ``{"type": "synthesize", "text", "voice"?, "speed"?, "request_id"?}``.

    ``voice`` names a voice or a blend (``a+b``, ``a(2)+b(1)``). ``normalize`` (default true) reads
    written forms the way people say them; ``timestamps`` (default false) asks for
    :class:`WordTimestamps` frames. ``lang`` is a Kokoro language letter (default: the voice's first
    letter); ``lexicon`` maps words to Kokoro phonemes for this request; ``skip_samples`` (default 0)
    sends the audio from that sample on. None leaves the field out (the server's default).
    """

    text: str
    voice: str | None = None
    speed: float | None = None
    request_id: str | None = None
    normalize: bool | None = None
    timestamps: bool | None = None
    #: Send the request's audio from this sample on (the client already has the first ones: resume).
    skip_samples: int | None = None
    lang: str | None = None
    lexicon: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    """Drop the named request, or every queued and running one when ``request_id`` is None (barge-in)."""

    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Close:
    """Finish what was already sent, then close the session with code 1000."""


@dataclass(frozen=True, slots=True)
class Keepalive:
    """Nothing to send yet, but the session is still wanted: restarts the endpoint's idle clock.

    The endpoint answers nothing. Sent by the agent side while no audio is owed, so a slow agent's
    session outlives the idle timeout on every transport (SageMaker carries no WebSocket pings).
    """


ClientMessage = Synthesize | Cancel | Close | Keepalive


@dataclass(frozen=True, slots=True)
class SynthesisStart:
    """Sent before the first audio of a request.

    ``skip_samples`` echoes the request's (None: the request asked for none, or the endpoint predates it
    and answers from sample 0).
    """

    request_id: str
    format: str = DEFAULT_FORMAT
    sample_rate: int = DEFAULT_SAMPLE_RATE
    channels: int = DEFAULT_CHANNELS
    skip_samples: int | None = None


@dataclass(frozen=True, slots=True)
class SynthesisComplete:
    """Sent after the last audio byte of a request."""

    request_id: str
    audio_bytes: int
    total_duration_s: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class SynthesisCancelled:
    """A cancelled request ends; no more audio for it follows."""

    request_id: str


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    """A request failed (or a frame could not be read); the session stays open."""

    code: str
    message: str
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class WordTiming:
    """One spoken word: seconds from the start of the request's audio, chars of the text the client sent."""

    word: str
    start_s: float
    end_s: float
    char_start: int
    char_end: int


@dataclass(frozen=True, slots=True)
class WordTimestamps:
    """Sent (when asked) before the audio of each segment: the words that audio speaks."""

    request_id: str
    words: tuple[WordTiming, ...]


ServerMessage = SynthesisStart | SynthesisComplete | SynthesisCancelled | ErrorFrame | WordTimestamps


def _dumps(obj: dict[str, Any]) -> str:
    """One frame's JSON text; refuses (TextEncodingError) a string UTF-8 cannot carry, naming its field."""
    return json_utf8(obj, "frame").decode("utf-8")


def encode_client_message(message: ClientMessage) -> str:
    """Encode a client message as one JSON text frame; optional fields left as None are omitted.

    Raises:
        TextEncodingError: a field holds a lone surrogate (e.g. ``frame.text``), which UTF-8 cannot carry.
    """
    if isinstance(message, Synthesize):
        obj: dict[str, Any] = {"type": "synthesize", "text": message.text}
        if message.voice is not None:
            obj["voice"] = message.voice
        if message.speed is not None:
            obj["speed"] = message.speed
        if message.request_id is not None:
            obj["request_id"] = message.request_id
        if message.normalize is not None:
            obj["normalize"] = message.normalize
        if message.timestamps is not None:
            obj["timestamps"] = message.timestamps
        if message.skip_samples is not None:
            obj["skip_samples"] = message.skip_samples
        if message.lang is not None:
            obj["lang"] = message.lang
        if message.lexicon is not None:
            obj["lexicon"] = dict(message.lexicon)
        return _dumps(obj)
    if isinstance(message, Cancel):
        obj = {"type": "cancel"}
        if message.request_id is not None:
            obj["request_id"] = message.request_id
        return _dumps(obj)
    if isinstance(message, Close):
        return _dumps({"type": "close"})
    if isinstance(message, Keepalive):
        return _dumps({"type": "keepalive"})
    raise TypeError(f"not a client message: {type(message).__name__}")


def encode_server_message(message: ServerMessage) -> str:
    """Encode a server control message as one JSON text frame.

    Raises:
        TextEncodingError: a field holds a lone surrogate (e.g. ``frame.message``).
    """
    if isinstance(message, SynthesisStart):
        start: dict[str, Any] = {
            "type": "synthesis_start",
            "request_id": message.request_id,
            "format": message.format,
            "sample_rate": message.sample_rate,
            "channels": message.channels,
        }
        if message.skip_samples is not None:
            start["skip_samples"] = message.skip_samples
        return _dumps(start)
    if isinstance(message, SynthesisComplete):
        return _dumps(
            {
                "type": "synthesis_complete",
                "request_id": message.request_id,
                "audio_bytes": message.audio_bytes,
                "total_duration_s": message.total_duration_s,
                "elapsed_s": message.elapsed_s,
            }
        )
    if isinstance(message, SynthesisCancelled):
        return _dumps({"type": "synthesis_cancelled", "request_id": message.request_id})
    if isinstance(message, WordTimestamps):
        return _dumps(
            {"type": "word_timestamps", "request_id": message.request_id, "words": words_json(message.words)}
        )
    if isinstance(message, ErrorFrame):
        obj: dict[str, Any] = {"type": "error", "code": message.code, "message": message.message}
        if message.request_id is not None:
            obj["request_id"] = message.request_id
        return _dumps(obj)
    raise TypeError(f"not a server message: {type(message).__name__}")


class WordJson(TypedDict):
    """One word as JSON, in ``word_timestamps`` frames and Leg 3 ``words`` events."""

    word: str
    start_s: float
    end_s: float
    char_start: int
    char_end: int


def words_json(words: tuple[WordTiming, ...] | list[WordTiming]) -> list[WordJson]:
    """Words as the JSON list of ``word_timestamps`` (and of Leg 3's ``words`` event)."""
    return [
        {
            "word": w.word,
            "start_s": w.start_s,
            "end_s": w.end_s,
            "char_start": w.char_start,
            "char_end": w.char_end,
        }
        for w in words
    ]


def _parse_object(data: str | bytes) -> dict[str, Any]:
    """Parse a frame as a JSON object, raising FrameDecodeError(invalid_json) otherwise."""
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise FrameDecodeError("invalid_json", "The message is not valid UTF-8.") from None
    else:
        text = data
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        raise FrameDecodeError("invalid_json", "The message is not valid JSON.") from None
    if not isinstance(obj, dict):
        raise FrameDecodeError("invalid_json", "The message must be a JSON object.")
    return obj


def _encodable(value: str, key: str) -> str:
    """Reject lone surrogates (JSON ``"\\udc00"``): they cannot be echoed back as UTF-8."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FrameDecodeError("invalid_request", f"'{key}' is not valid Unicode text.") from None
    return value


def _optional_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FrameDecodeError("invalid_request", f"'{key}' must be a string.")
    return _encodable(value, key)


def _optional_bool(obj: dict[str, Any], key: str) -> bool | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise FrameDecodeError("invalid_request", f"'{key}' must be true or false.")
    return value


def _optional_count(obj: dict[str, Any], key: str) -> int | None:
    """A non-negative JSON integer, or None when absent."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FrameDecodeError("invalid_request", f"'{key}' must be a whole number of 0 or more.")
    return value


def decode_client_message(data: str | bytes) -> ClientMessage:
    """Decode one client frame (text or binary, UTF-8 JSON either way).

    Type and presence are checked here; limits that depend on the server (text length, speed range,
    known voices) are the server's to check.

    Raises:
        FrameDecodeError: with code ``invalid_json`` (not UTF-8 JSON object) or ``invalid_request``.
    """
    obj = _parse_object(data)
    kind = obj.get("type")
    if kind is None and "text" in obj:
        kind = "synthesize"
    if kind == "synthesize":
        text = obj.get("text")
        if not isinstance(text, str):
            raise FrameDecodeError("invalid_request", "'text' is required and must be a string.")
        if not text.strip():
            raise FrameDecodeError("invalid_request", "'text' must not be empty.")
        _encodable(text, "text")
        speed = obj.get("speed")
        if speed is not None:
            if isinstance(speed, bool) or not isinstance(speed, int | float) or not math.isfinite(speed):
                raise FrameDecodeError("invalid_request", "'speed' must be a number.")
            speed = float(speed)
        return Synthesize(
            text=text,
            voice=_optional_str(obj, "voice"),
            speed=speed,
            request_id=_optional_str(obj, "request_id"),
            normalize=_optional_bool(obj, "normalize"),
            timestamps=_optional_bool(obj, "timestamps"),
            skip_samples=_optional_count(obj, "skip_samples"),
            lang=_optional_str(obj, "lang"),
            lexicon=decode_lexicon(obj.get("lexicon")),
        )
    if kind == "cancel":
        return Cancel(request_id=_optional_str(obj, "request_id"))
    if kind == "close":
        return Close()
    if kind == "keepalive":
        return Keepalive()
    if kind is None:
        raise FrameDecodeError("invalid_request", "The message needs a 'type' or a 'text'.")
    if not isinstance(kind, str):
        raise FrameDecodeError("invalid_request", "'type' must be a string.")
    raise FrameDecodeError(
        "invalid_request", "Unknown message type; expected synthesize, cancel, close or keepalive."
    )


def decode_lexicon(value: Any) -> dict[str, str] | None:
    """A ``lexicon`` field: None when absent, else a ``{"word": "phonemes"}`` object of strings.

    Raises:
        FrameDecodeError: not an object of non-empty strings.
    """
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(word, str) and word.strip() and isinstance(phonemes, str)
        for word, phonemes in value.items()
    ):
        raise FrameDecodeError("invalid_request", '\'lexicon\' must be an object of {"word": "phonemes"}.')
    return {word.strip(): phonemes for word, phonemes in value.items()}


def _required_str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise FrameDecodeError("invalid_request", f"A server message needs a string '{key}'.")
    return value


def _number(obj: dict[str, Any], key: str, default: float | None = None, *, integer: bool = False) -> float:
    """A finite, non-negative JSON number (an integer if ``integer``); ``default`` when absent."""
    value = obj.get(key, default)
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        raise FrameDecodeError("invalid_request", f"A server message needs a number '{key}'.")
    if not math.isfinite(value) or value < 0 or (integer and value != int(value)):
        raise FrameDecodeError("invalid_request", f"A server message has an invalid '{key}'.")
    return value


def _words(value: Any) -> tuple[WordTiming, ...]:
    if not isinstance(value, list):
        raise FrameDecodeError("invalid_request", "A word_timestamps message needs a list 'words'.")
    words: list[WordTiming] = []
    for item in value:
        if not isinstance(item, dict):
            raise FrameDecodeError("invalid_request", "Each word must be a JSON object.")
        words.append(
            WordTiming(
                word=_required_str(item, "word"),
                start_s=float(_number(item, "start_s")),
                end_s=float(_number(item, "end_s")),
                char_start=int(_number(item, "char_start", integer=True)),
                char_end=int(_number(item, "char_end", integer=True)),
            )
        )
    return tuple(words)


def decode_server_control(data: str | bytes) -> ServerMessage:
    """Decode one server control frame.

    Raises:
        FrameDecodeError: the frame is not a known, well-formed server message (``invalid_json`` when it
            is not a UTF-8 JSON object, else ``invalid_request``).
    """
    obj = _parse_object(data)
    kind = obj.get("type")
    if kind == "synthesis_start":
        fmt = obj.get("format", DEFAULT_FORMAT)
        if not isinstance(fmt, str):
            raise FrameDecodeError("invalid_request", "A server message needs a string 'format'.")
        return SynthesisStart(
            request_id=_required_str(obj, "request_id"),
            format=fmt,
            sample_rate=int(_number(obj, "sample_rate", DEFAULT_SAMPLE_RATE, integer=True)),
            channels=int(_number(obj, "channels", DEFAULT_CHANNELS, integer=True)),
            skip_samples=None
            if obj.get("skip_samples") is None
            else int(_number(obj, "skip_samples", integer=True)),
        )
    if kind == "synthesis_complete":
        return SynthesisComplete(
            request_id=_required_str(obj, "request_id"),
            audio_bytes=int(_number(obj, "audio_bytes", integer=True)),
            total_duration_s=float(_number(obj, "total_duration_s")),
            elapsed_s=float(_number(obj, "elapsed_s", 0.0)),
        )
    if kind == "synthesis_cancelled":
        return SynthesisCancelled(request_id=_required_str(obj, "request_id"))
    if kind == "word_timestamps":
        return WordTimestamps(request_id=_required_str(obj, "request_id"), words=_words(obj.get("words")))
    if kind == "error":
        rid = obj.get("request_id")
        code = obj.get("code", "internal")
        message = obj.get("message", "")
        if (
            not isinstance(code, str)
            or not isinstance(message, str)
            or not (rid is None or isinstance(rid, str))
        ):
            raise FrameDecodeError("invalid_request", "An error message has fields of the wrong type.")
        return ErrorFrame(code=code, message=message, request_id=rid)
    raise FrameDecodeError("invalid_request", "Unknown server message type.")


def is_control_frame(chunk: bytes) -> bool:
    """The fallback rule: a chunk is a control frame only if ALL of it decodes as UTF-8 JSON to an object."""
    if not chunk or (chunk[:1] != b"{" and not chunk[:1].isspace()):
        return False
    try:
        return isinstance(json.loads(chunk.decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


def decode_server_frame(data: str | bytes, *, is_text: bool | None = None) -> ServerMessage | bytes:
    """Classify and decode one frame from the server.

    Args:
        data: The frame's payload.
        is_text: The transport's own frame kind where it keeps one (WebSocket opcode, SageMaker
            ``data_type == "UTF8"``); None applies the whole-chunk JSON rule.

    Returns:
        A server message for a control frame, or the audio bytes.
    """
    if isinstance(data, str):
        return decode_server_control(data)
    if is_text is None:
        is_text = is_control_frame(data)
    if is_text:
        return decode_server_control(data)
    return bytes(data)
