"""Leg 1 frame codec (sans-I/O): typed messages for every row of PROTOCOL.md, and their encoding.

Client → server: :class:`Synthesize`, :class:`Cancel`, :class:`Close`.
Server → client: :class:`SynthesisStart`, audio bytes, :class:`WordTimestamps` (when asked),
:class:`SynthesisComplete`, :class:`SynthesisCancelled`, :class:`ErrorFrame`.

Each message is declared once, as a frozen dataclass whose ``TYPE`` is its ``type``: encoding writes its
fields in declaration order (None left out), and decoding reads and checks each field by its declared type
(:mod:`._frame_fields`).

Control frames are UTF-8 JSON objects. Where a transport does not keep frame kinds, a chunk is a control
frame only if the WHOLE chunk decodes as UTF-8 JSON to an object (see :func:`is_control_frame`); raw PCM
that happens to begin with ``{`` stays audio.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import (
    Any,
    ClassVar,
    Final,
    TypedDict,
    cast,
    get_args,
)

from strands_voice_protocol._frame_fields import (
    encodable,
    optional_bool,
    optional_count,
    optional_number,
    optional_request_id,
    optional_str,
    parse_object,
    read_dataclass,
    type_hints,
)
from strands_voice_protocol._utf8 import json_utf8
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.wire import SAMPLE_RATE

__all__ = [
    "DEFAULT_CHANNELS",
    "DEFAULT_FORMAT",
    "DEFAULT_SAMPLE_RATE",
    "Cancel",
    "ClientMessage",
    "Close",
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
    "parse_object",
    "words_json",
]

DEFAULT_FORMAT: Final = "pcm16"
DEFAULT_SAMPLE_RATE: Final = SAMPLE_RATE
DEFAULT_CHANNELS: Final = 1


@dataclass(frozen=True, slots=True)
class Synthesize:
    """Synthesize one chunk of text: ``{"type": "synthesize", "text", "voice"?, "speed"?, "request_id"?}``.

    ``voice`` names a voice or a blend (``a+b``, ``a(2)+b(1)``). ``normalize`` (default true) reads
    written forms the way people say them; ``timestamps`` (default false) asks for
    :class:`WordTimestamps` frames. ``lang`` is a Kokoro language letter (default: the voice's first
    letter); ``lexicon`` maps words to Kokoro phonemes for this request; ``skip_samples`` (default 0)
    sends the audio from that sample on. None leaves the field out (the server's default).
    """

    TYPE: ClassVar = "synthesize"

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

    TYPE: ClassVar = "cancel"

    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Close:
    """Finish what was already sent, then close the session with code 1000."""

    TYPE: ClassVar = "close"


@dataclass(frozen=True, slots=True)
class Keepalive:
    """Nothing to send yet, but the session is still wanted: restarts the endpoint's idle clock.

    The endpoint answers nothing. Sent by the agent side while no audio is owed, so a slow agent's
    session outlives the idle timeout on every transport (SageMaker carries no WebSocket pings).
    """

    TYPE: ClassVar = "keepalive"


ClientMessage = Synthesize | Cancel | Close | Keepalive


@dataclass(frozen=True, slots=True)
class SynthesisStart:
    """Sent before the first audio of a request.

    ``skip_samples`` echoes the request's (None: the request asked for none, or the endpoint predates it
    and answers from sample 0).
    """

    TYPE: ClassVar = "synthesis_start"

    request_id: str
    format: str = DEFAULT_FORMAT
    sample_rate: int = DEFAULT_SAMPLE_RATE
    channels: int = DEFAULT_CHANNELS
    skip_samples: int | None = None


@dataclass(frozen=True, slots=True)
class SynthesisComplete:
    """Sent after the last audio byte of a request."""

    TYPE: ClassVar = "synthesis_complete"

    request_id: str
    audio_bytes: int
    total_duration_s: float
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class SynthesisCancelled:
    """A cancelled request ends; no more audio for it follows."""

    TYPE: ClassVar = "synthesis_cancelled"

    request_id: str


@dataclass(frozen=True, slots=True)
class ErrorFrame:
    """A request failed (or a frame could not be read); the session stays open.

    ``code`` is one of :data:`~strands_voice_protocol.errors.FRAME_ERROR_CODES`.
    """

    TYPE: ClassVar = "error"

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

    TYPE: ClassVar = "word_timestamps"

    request_id: str
    words: tuple[WordTiming, ...]


ServerMessage = SynthesisStart | SynthesisComplete | SynthesisCancelled | ErrorFrame | WordTimestamps


def _frame_json(message: ClientMessage | ServerMessage) -> dict[str, Any]:
    """A message as its JSON object: ``type``, then each field in declaration order; None is left out."""
    obj: dict[str, Any] = {"type": message.TYPE}
    for field in fields(message):
        value = getattr(message, field.name)
        if value is None:
            continue
        if isinstance(value, Mapping):
            value = dict(value)
        elif field.name == "words":
            value = words_json(value)
        obj[field.name] = value
    return obj


def encode_client_message(message: ClientMessage) -> str:
    """Encode a client message as one JSON text frame; optional fields left as None are omitted.

    Raises:
        TextEncodingError: a field holds a lone surrogate (e.g. ``frame.text``), which UTF-8 cannot carry.
    """
    if not isinstance(message, ClientMessage):
        raise TypeError(f"not a client message: {type(message).__name__}")
    return json_utf8(_frame_json(message), "frame").decode("utf-8")


def encode_server_message(message: ServerMessage) -> str:
    """Encode a server control message as one JSON text frame; optional fields left as None are omitted.

    Raises:
        TextEncodingError: a field holds a lone surrogate (e.g. ``frame.message``).
    """
    if not isinstance(message, ServerMessage):
        raise TypeError(f"not a server message: {type(message).__name__}")
    return json_utf8(_frame_json(message), "frame").decode("utf-8")


class WordJson(TypedDict):
    """One word as JSON, in ``word_timestamps`` frames and Leg 3 ``words`` events."""

    word: str
    start_s: float
    end_s: float
    char_start: int
    char_end: int


def words_json(words: tuple[WordTiming, ...] | list[WordTiming]) -> list[WordJson]:
    """Words as the JSON list of ``word_timestamps`` (and of Leg 3's ``words`` event)."""
    return [cast(WordJson, asdict(word)) for word in words]


def _text(obj: dict[str, Any], key: str) -> str:
    text = obj.get(key)
    if not isinstance(text, str):
        raise FrameDecodeError("invalid_request", f"'{key}' is required and must be a string.")
    if not text.strip():
        raise FrameDecodeError("invalid_request", f"'{key}' must not be empty.")
    return encodable(text, key)


# How a client message's field is read, by its declared type.
_CLIENT_READERS: Final[dict[object, Callable[[dict[str, Any], str], Any]]] = {
    str: _text,
    str | None: optional_str,
    float | None: optional_number,
    bool | None: optional_bool,
    int | None: optional_count,
    Mapping[str, str] | None: lambda obj, key: decode_lexicon(obj.get(key)),
}
# Fields read by name rather than by type: a request id is bounded visible ASCII (the endpoint logs it and
# echoes it in a header).
_CLIENT_FIELDS: Final[dict[str, Callable[[dict[str, Any], str], Any]]] = {"request_id": optional_request_id}
_CLIENT_TYPES: Final[dict[str, type[ClientMessage]]] = {cls.TYPE: cls for cls in get_args(ClientMessage)}


def decode_client_message(data: str | bytes) -> ClientMessage:
    """Decode one client frame (text or binary, UTF-8 JSON either way); fields are read by declared type.

    Type and presence are checked here; limits that depend on the server (text length, speed range,
    known voices) are the server's to check.

    Raises:
        FrameDecodeError: with code ``invalid_json`` (not UTF-8 JSON object) or ``invalid_request``.
    """
    obj = parse_object(data)
    kind = obj.get("type")
    if kind is None and "text" in obj:
        kind = "synthesize"  # the public Kokoro-on-SageMaker dialect: {text, voice, speed, request_id}
    if kind is None:
        raise FrameDecodeError("invalid_request", "The message needs a 'type' or a 'text'.")
    if not isinstance(kind, str):
        raise FrameDecodeError("invalid_request", "'type' must be a string.")
    cls = _CLIENT_TYPES.get(kind)
    if cls is None:
        raise FrameDecodeError(
            "invalid_request", "Unknown message type; expected synthesize, cancel, close or keepalive."
        )
    hints = type_hints(cls)
    return cls(
        **{
            field.name: _CLIENT_FIELDS.get(field.name, _CLIENT_READERS[hints[field.name]])(obj, field.name)
            for field in fields(cls)
        }
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


_SERVER_TYPES: Final[dict[str, type[ServerMessage]]] = {cls.TYPE: cls for cls in get_args(ServerMessage)}
# What a field an older or terser endpoint leaves out reads as, beyond the dataclass defaults.
_ABSENT: Final[dict[str, object]] = {"elapsed_s": 0.0, "code": "internal", "message": ""}


def decode_server_control(data: str | bytes) -> ServerMessage:
    """Decode one server control frame; each field is read and checked by its declared type.

    Raises:
        FrameDecodeError: the frame is not a known, well-formed server message (``invalid_json`` when it
            is not a UTF-8 JSON object, else ``invalid_request``).
    """
    obj = parse_object(data)
    kind = obj.get("type")
    cls = _SERVER_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise FrameDecodeError("invalid_request", "Unknown server message type.")
    return read_dataclass(cls, obj, _ABSENT)


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
