"""Turning one client message (a Leg 1 ``synthesize`` frame) into a validated :class:`SynthesisJob`, or the
error frame that answers it (sans-I/O)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import ErrorFrame, Synthesize

from kokoro_endpoint.engines.interface import Engine, ReadingEngine
from kokoro_endpoint.reading.languages import LANGUAGE_NAMES, READER_EXTRAS, Reading, request_language
from kokoro_endpoint.reading.lexicon import Lexicon, lexicon_problem
from kokoro_endpoint.settings import Settings
from kokoro_endpoint.voices import BlendWeightError, parse_voice, unknown_part

__all__ = ["SynthesisJob", "error_from_decode", "validate_synthesize"]


@dataclass
class SynthesisJob:
    """A validated request.

    Attributes:
        request_id: The client's id, or a generated uuid4 hex.
        text: What to speak.
        voice: A voice the engine has, or a blend of them.
        speed: Within the configured range.
        received_at: ``time.monotonic()`` when the request arrived (for ``elapsed_s``).
        normalize: Read written forms the way people say them (``"normalize": false`` turns it off).
        timestamps: Send ``word_timestamps`` before each segment's audio.
        skip_samples: Send the audio from this sample on (None: the request named none; 0 sent).
        reading: The language and the lexicon (the request's over the deployment's).
    """

    request_id: str
    text: str
    voice: str
    speed: float
    received_at: float = field(default_factory=time.monotonic)
    normalize: bool = True
    timestamps: bool = False
    skip_samples: int | None = None
    reading: Reading = field(default_factory=Reading)


def validate_synthesize(
    message: Synthesize, engine: Engine, settings: Settings, received_at: float | None = None
) -> SynthesisJob | ErrorFrame:
    """Check a decoded synthesize message against the server's limits and the engine's voices.

    Returns:
        The job, or the error frame that answers it (text_too_long, invalid_request, unknown_voice,
        unsupported_language).
    """
    # Errors echo the client's id only: an id it never saw would not help it.
    request_id = message.request_id
    if len(message.text) > settings.max_text_chars:
        return ErrorFrame(
            "text_too_long", f"'text' is longer than {settings.max_text_chars} characters.", request_id
        )
    speed = 1.0 if message.speed is None else message.speed
    if not settings.min_speed <= speed <= settings.max_speed:
        return ErrorFrame(
            "invalid_request",
            f"'speed' must be between {settings.min_speed:g} and {settings.max_speed:g}.",
            request_id,
        )
    voice = message.voice or engine.default_voice
    try:
        problem = _voice_problem(voice, engine.voices)
    except BlendWeightError as error:
        return ErrorFrame("invalid_request", str(error), request_id)
    if problem is not None:
        shown = ", ".join(sorted(engine.voices)[:12])
        more = ", ..." if len(engine.voices) > 12 else ""
        return ErrorFrame("unknown_voice", f"{problem} This endpoint has: {shown}{more}.", request_id)
    reading = _reading(message, voice, engine, settings)
    if isinstance(reading, ErrorFrame):
        return reading
    return SynthesisJob(
        request_id=request_id or uuid.uuid4().hex,
        text=message.text,
        voice=voice,
        speed=float(speed),
        received_at=time.monotonic() if received_at is None else received_at,
        normalize=message.normalize is not False,
        timestamps=message.timestamps is True,
        skip_samples=message.skip_samples,
        reading=reading,
    )


def _voice_problem(voice: str, voices: frozenset[str]) -> str | None:
    """Why ``voice`` (a name or a blend) is not one the engine can speak, or None.

    Raises:
        BlendWeightError: a blend's weight is out of range (an invalid request, not an unknown voice).
    """
    if voice in voices:
        return None
    try:
        parts = parse_voice(voice)
    except BlendWeightError:
        raise
    except ValueError as error:
        return str(error)
    unknown = unknown_part(parts, voices)
    return None if unknown is None else f"Unknown voice '{unknown}'."


def _reading(message: Synthesize, voice: str, engine: Engine, settings: Settings) -> Reading | ErrorFrame:
    """The request's language and lexicon, or the error frame (unsupported_language, invalid_request)."""
    lexicon = Lexicon(settings.lexicon, message.lexicon or {})
    if not isinstance(engine, ReadingEngine):
        # This engine reads with its own G2P (American English); the inline form still works there.
        if message.lang not in (None, "a"):
            return _unsupported(message.lang or "", frozenset({"a"}), message.request_id)
        if message.lexicon:
            return ErrorFrame("invalid_request", "This engine takes no 'lexicon'.", message.request_id)
        return Reading()
    lang = request_language(message.lang, voice, message.text)
    if lang not in engine.languages:
        return _unsupported(lang, engine.languages, message.request_id)
    problem = lexicon_problem(lexicon, message.text, engine.phonemes)
    if problem is not None:
        return ErrorFrame("invalid_request", problem, message.request_id)
    return Reading(lang, lexicon)


def _unsupported(lang: str, languages: frozenset[str], request_id: str | None) -> ErrorFrame:
    have = ", ".join(f"{letter} ({LANGUAGE_NAMES.get(letter, letter)})" for letter in sorted(languages))
    extra = f" ({READER_EXTRAS[lang]})" if lang in READER_EXTRAS else ""
    return ErrorFrame(
        "unsupported_language",
        f"No reader for language '{lang}'{extra}. This endpoint reads: {have}.",
        request_id,
    )


def error_from_decode(error: FrameDecodeError) -> ErrorFrame:
    """The error frame answering a frame that could not be decoded."""
    return ErrorFrame(error.code, error.message)
