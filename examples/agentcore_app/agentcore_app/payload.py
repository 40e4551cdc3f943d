"""Validate the Leg 3 invocation payload, and a spoken call's ``start`` frame (the same fields, no prompt).

``{"prompt", "mode"?, "voice"?, "speed"?, "format"?, "normalize"?, "timestamps"?, "lang"?, "lexicon"?}``.

Pure functions, no I/O: the app turns a :class:`PayloadError` into a 400 answer whose message is written
for a person and names the offending field.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

from strands_voice_protocol.audio import AUDIO_FORMATS
from strands_voice_protocol.call_events import CALL_SAMPLE_RATE
from strands_voice_protocol.errors import FrameDecodeError, StrandsVoiceError
from strands_voice_protocol.frames import decode_lexicon
from strands_voice_protocol.limits import MAX_SPEED, MIN_SPEED

from strands_voice.listen import hearing_language_of
from strands_voice.speech import MODES, VoiceOptions

__all__ = [
    "AUDIO_FORMATS",
    "MAX_PROMPT_CHARS",
    "MODES",
    "PAYLOAD_FIELDS",
    "START_FIELDS",
    "CallStart",
    "PayloadError",
    "VoiceRequest",
    "parse_call_start",
    "parse_payload",
    "parse_prompt",
]

PAYLOAD_FIELDS: Final = frozenset(
    {"prompt", "mode", "voice", "speed", "format", "normalize", "timestamps", "lang", "lexicon"}
)
#: A spoken call's ``start`` frame: the payload's voice fields, its ``type`` and the microphone's rate.
START_FIELDS: Final = (PAYLOAD_FIELDS - {"prompt"}) | {"type", "sample_rate", "listen_lang"}
MAX_PROMPT_CHARS: Final = 8000
# Kokoro voice ids look like "af_heart" or "jm_kumo", blends like "af_bella(2)+af_sky(1)"; the endpoint
# says whether each voice exists.
_ONE_VOICE = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}(?:\([0-9]{1,3}(?:\.[0-9]{1,3})?\))?"
_VOICE_ID = re.compile(rf"{_ONE_VOICE}(?:\+{_ONE_VOICE}){{0,7}}")
_LANG = re.compile(r"[a-z]")
_LISTEN_LANG = re.compile(r"[a-z]|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,3}")


class PayloadError(StrandsVoiceError, ValueError):
    """The invocation payload is not valid.

    Attributes:
        message: What is wrong, for a person; names the field, never carries exception text.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class VoiceRequest:
    """A validated invocation.

    Attributes:
        prompt: The user's prompt, stripped.
        options: How the answer is spoken (the payload's ``mode``, ``voice``, ``speed``, ``format``,
            ``normalize``, ``timestamps``, ``lang`` and ``lexicon``; ``normalize`` is on unless turned off).
    """

    prompt: str
    options: VoiceOptions = field(default_factory=lambda: VoiceOptions(normalize=True))


@dataclass(frozen=True)
class CallStart:
    """A validated ``start`` frame of a spoken call.

    Attributes:
        options: How the call's answers are spoken (the payload's voice fields).
        sample_rate: The microphone audio's rate.
        listen_lang: The caller's language: ``listen_lang`` as sent (a Kokoro letter or a BCP-47 tag),
            else the answers' (``lang``, else the voice's letter, as the endpoint reads it).
    """

    options: VoiceOptions
    sample_rate: int
    listen_lang: str = "a"


def _flag(name: str, value: Any, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise PayloadError(f"'{name}' must be true or false")
    return value


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise PayloadError(f"'{name}' must be one of {', '.join(repr(c) for c in choices)}")
    return value


def _speed(speed: Any) -> float | None:
    if speed is None:
        return None
    # bool is an int subclass; true/false is a type mistake, not a speed.
    if isinstance(speed, bool) or not isinstance(speed, int | float) or not math.isfinite(speed):
        raise PayloadError("'speed' must be a number")
    if not MIN_SPEED <= speed <= MAX_SPEED:
        raise PayloadError(f"'speed' must be between {MIN_SPEED} and {MAX_SPEED}")
    return float(speed)


def parse_payload(payload: Any, *, max_prompt_chars: int = MAX_PROMPT_CHARS) -> VoiceRequest:
    """Check every field of an invocation payload.

    Args:
        payload: The decoded JSON body.
        max_prompt_chars: The longest prompt accepted.

    Returns:
        The validated request (absent optional fields take their defaults; ``null`` counts as absent).

    Raises:
        PayloadError: The payload is not an object, has unknown fields, or a field has a bad value.
    """
    if not isinstance(payload, dict):
        raise PayloadError("the payload must be a JSON object with a 'prompt'")
    _no_unknown(payload, PAYLOAD_FIELDS)
    prompt = parse_prompt(payload.get("prompt"), max_prompt_chars=max_prompt_chars)
    return VoiceRequest(prompt=prompt, options=_options(payload))


def parse_prompt(prompt: Any, *, max_prompt_chars: int = MAX_PROMPT_CHARS) -> str:
    """A prompt, stripped; raises :class:`PayloadError` when it is empty, not text, or too long."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise PayloadError("'prompt' must be a non-empty string")
    text: str = prompt.strip()
    if len(text) > max_prompt_chars:
        raise PayloadError(f"'prompt' is too long: {len(text)} characters, at most {max_prompt_chars}")
    return text


def parse_call_start(payload: Any) -> CallStart:
    """Check a spoken call's ``start`` frame (Leg 3 over WebSocket): the payload's fields, no prompt.

    Raises:
        PayloadError: Not an object, unknown fields, a bad value, or a ``sample_rate`` other than
            :data:`~strands_voice_protocol.call_events.CALL_SAMPLE_RATE`.
    """
    if not isinstance(payload, dict):
        raise PayloadError("'start' must be a JSON object")
    _no_unknown(payload, START_FIELDS)
    rate = payload.get("sample_rate")
    if rate is not None and (isinstance(rate, bool) or rate != CALL_SAMPLE_RATE):
        raise PayloadError(f"'sample_rate' must be {CALL_SAMPLE_RATE} (PCM16 mono; resample before sending)")
    options = _options(payload)
    listen_lang = payload.get("listen_lang")
    if listen_lang is not None and not (isinstance(listen_lang, str) and _LISTEN_LANG.fullmatch(listen_lang)):
        raise PayloadError("'listen_lang' must be a language letter such as 'j' or a tag such as 'ja-JP'")
    heard = hearing_language_of(options.lang, options.voice, listen_lang)
    return CallStart(options=options, sample_rate=CALL_SAMPLE_RATE, listen_lang=heard)


def _no_unknown(payload: dict[Any, Any], accepted: frozenset[str]) -> None:
    unknown = sorted(str(key) for key in payload if key not in accepted)
    if unknown:
        raise PayloadError(
            f"unknown field(s) {', '.join(repr(k) for k in unknown)}; accepted: {', '.join(sorted(accepted))}"
        )


def _options(payload: dict[Any, Any]) -> VoiceOptions:
    """The payload's voice options, each field checked (see :func:`parse_payload`)."""
    mode = payload.get("mode")
    mode = "bidi" if mode is None else _choice("mode", mode, MODES)

    voice = payload.get("voice")
    if voice is not None and (not isinstance(voice, str) or not _VOICE_ID.fullmatch(voice)):
        raise PayloadError(
            "'voice' must be a voice id such as 'af_heart' (letters, digits, '_', '-', '.') or a blend "
            "such as 'af_bella(2)+af_sky(1)'"
        )
    lang = payload.get("lang")
    if lang is not None and (not isinstance(lang, str) or not _LANG.fullmatch(lang)):
        raise PayloadError("'lang' must be a language letter such as 'a' (American English) or 'j'")
    try:
        lexicon = decode_lexicon(payload.get("lexicon"))
    except FrameDecodeError:
        raise PayloadError('\'lexicon\' must be an object of {"word": "phonemes"}') from None

    speed = _speed(payload.get("speed"))
    audio_format = payload.get("format")
    audio_format = "pcm16" if audio_format is None else _choice("format", audio_format, AUDIO_FORMATS)

    return VoiceOptions(
        mode="bidi" if mode == "bidi" else "batch",
        voice=voice,
        speed=speed,
        format=audio_format,
        normalize=_flag("normalize", payload.get("normalize"), True),
        timestamps=_flag("timestamps", payload.get("timestamps"), False),
        lang=lang,
        lexicon=lexicon,
    )
