"""What the session core asks its driver to do: the outputs of the sans-I/O `SessionCore`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from strands_voice_protocol.errors import TTSError
from strands_voice_protocol.frames import ClientMessage

from strands_voice.session._events import SessionEvent

#: What a failed send means: ``down`` the connection is down (resume follows); ``raise`` a non-retryable
#: error ends the session; ``drop`` a non-retryable error fails the one request being sent, to its caller.
SendFailure = Literal["down", "raise", "drop"]


@dataclass(frozen=True, slots=True)
class Send:
    """Send one client message, if the connection is still up when the send lock is taken."""

    message: ClientMessage
    on_error: SendFailure = "down"


@dataclass(frozen=True, slots=True)
class Deliver:
    """Give one event to the session's consumer."""

    event: SessionEvent


@dataclass(frozen=True, slots=True)
class Reconnect:
    """Wait ``delay_s`` (the retry policy's sleep), then connect again and report how it went."""

    delay_s: float


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Stop receiving and close the transport (a resume connects it again)."""


@dataclass(frozen=True, slots=True)
class Fail:
    """Raise ``error`` where the driver stands (iteration, or the call that caused it)."""

    error: TTSError


@dataclass(frozen=True, slots=True)
class SetTimer:
    """Call :meth:`~strands_voice.session._core.SessionCore.timer_due` at ``at`` (None: no timer)."""

    at: float | None


@dataclass(frozen=True, slots=True)
class End:
    """Nothing more is owed after :meth:`~strands_voice.session.TTSSession.finish`: iteration ends."""


Action = Send | Deliver | Reconnect | Disconnect | Fail | SetTimer | End
