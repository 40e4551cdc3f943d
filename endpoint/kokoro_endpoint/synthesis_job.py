"""Turning one client message (a Leg 1 ``synthesize`` frame) into a validated :class:`SynthesisJob`, or the
error frame that answers it (sans-I/O)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import ErrorFrame, Synthesize

from kokoro_endpoint.engines import Engine
from kokoro_endpoint.settings import Settings

__all__ = ["SynthesisJob", "error_from_decode", "validate_synthesize"]


@dataclass
class SynthesisJob:
    """A validated request.

    Attributes:
        request_id: The client's id, or a generated uuid4 hex.
        text: What to speak.
        voice: A voice the engine has.
        speed: Within the configured range.
        received_at: ``time.monotonic()`` when the request arrived (for ``elapsed_s``).
        normalize: Read written forms the way people say them (``"normalize": false`` turns it off).
        timestamps: Send ``word_timestamps`` before each segment's audio.
        skip_samples: Send the audio from this sample on (None: the request named none; 0 sent).
    """

    request_id: str
    text: str
    voice: str
    speed: float
    received_at: float = field(default_factory=time.monotonic)
    normalize: bool = True
    timestamps: bool = False
    skip_samples: int | None = None


def validate_synthesize(
    message: Synthesize, engine: Engine, settings: Settings, received_at: float | None = None
) -> SynthesisJob | ErrorFrame:
    """Check a decoded synthesize message against the server's limits and the engine's voices.

    Returns:
        The job, or the error frame that answers it (text_too_long, invalid_request, unknown_voice).
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
    if voice not in engine.voices:
        shown = ", ".join(sorted(engine.voices)[:12])
        more = ", ..." if len(engine.voices) > 12 else ""
        return ErrorFrame("unknown_voice", f"Unknown voice. This endpoint has: {shown}{more}.", request_id)
    return SynthesisJob(
        request_id=request_id or uuid.uuid4().hex,
        text=message.text,
        voice=voice,
        speed=float(speed),
        received_at=time.monotonic() if received_at is None else received_at,
        normalize=message.normalize is not False,
        timestamps=message.timestamps is True,
        skip_samples=message.skip_samples,
    )


def error_from_decode(error: FrameDecodeError) -> ErrorFrame:
    """The error frame answering a frame that could not be decoded."""
    return ErrorFrame(error.code, error.message)
