"""The demo's one error: what went wrong, in one line that says what to do."""

from __future__ import annotations

from strands_voice_protocol.errors import StrandsVoiceError

__all__ = ["DemoError"]


class DemoError(StrandsVoiceError):
    """The demo could not run; the message is one line that says what to do."""
