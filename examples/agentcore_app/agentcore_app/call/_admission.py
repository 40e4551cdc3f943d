"""Who may open a spoken call: the page's own origin (or an allow-list), and no more calls than a cap.

A browser sends ``Origin`` with every WebSocket handshake and lets any page open a socket to any host, so
without a check a page on another site could open ``ws://host/ws?session_id=X`` with the caller's cookies
and network position (cross-site WebSocket hijacking). A handshake whose ``Origin`` is neither the app's
own (the ``Host`` it was sent to) nor on the allow-list is refused before it is accepted (HTTP 403). A
client that sends no ``Origin`` (not a browser: a phone gateway, a test) is let in.

Each call holds a VAD, a recognizer's turn and an answer: past ``max_calls`` at once, a new call is
accepted only to be closed with 1013 (try again later, the protocol's "busy") and a reason. The default
cap is measured, not guessed: ``strands-voice bench --talk --calls 1,2,4`` finds the most calls at once
whose voice-to-voice p95 stays at or under 1.5 s; :data:`CALLS_PER_CORE` is that figure per core
(docs/benchmarks.md), and the cap is it times this machine's cores.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from strands_voice_protocol.errors import ConfigurationError

__all__ = ["CALLS_PER_CORE", "DEFAULT_MAX_CALLS", "CallAdmission", "busy_reason", "default_max_calls"]

#: Spoken calls one core holds with voice-to-voice p95 <= 1.5 s, measured by ``bench --talk --calls``
#: (docs/benchmarks.md: one call on a 2-core machine).
CALLS_PER_CORE: Final = 0.5


def default_max_calls(cores: int | None = None) -> int:
    """The measured calls per core times ``cores`` (None: this machine's), at least one."""
    return max(1, int(CALLS_PER_CORE * (cores or os.cpu_count() or 1)))


#: Calls served at once by one process, by default: :func:`default_max_calls` on this machine.
DEFAULT_MAX_CALLS: Final = default_max_calls()


def busy_reason(max_calls: int) -> str:
    """The close reason of a call past the cap (a WebSocket close reason: at most 123 bytes)."""
    return f"busy: this server holds {max_calls} call(s) at once; try again shortly"


@dataclass
class CallAdmission:
    """The call route's door (see the module docstring).

    Attributes:
        max_calls: Calls at once; the next is closed with 1013.
        allowed_origins: Origins (``https://example.com``) let in besides the app's own; ``*`` lets any in.
        open_calls: Calls open now.
    """

    max_calls: int = DEFAULT_MAX_CALLS
    allowed_origins: frozenset[str] = field(default_factory=frozenset)
    open_calls: int = 0

    def __post_init__(self) -> None:
        if self.max_calls < 1:
            raise ConfigurationError(f"the call cap must be at least 1, got {self.max_calls}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> CallAdmission:
        """``CALL_MAX_CALLS`` and ``CALL_ALLOWED_ORIGINS`` (comma-separated)."""
        env = os.environ if environ is None else environ
        raw = env.get("CALL_MAX_CALLS", "").strip()
        try:
            max_calls = int(raw) if raw else DEFAULT_MAX_CALLS
        except ValueError as error:
            raise ConfigurationError(f"CALL_MAX_CALLS must be a whole number, got {raw!r}") from error
        origins = {origin.strip().rstrip("/") for origin in env.get("CALL_ALLOWED_ORIGINS", "").split(",")}
        return cls(max_calls, frozenset(origin for origin in origins if origin))

    def origin_allowed(self, headers: Mapping[str, str]) -> bool:
        """Whether a handshake with these headers comes from a page the app trusts."""
        origin = headers.get("origin")
        if origin is None or "*" in self.allowed_origins or origin.rstrip("/") in self.allowed_origins:
            return True
        host = headers.get("host", "")
        return bool(host) and urlsplit(origin).netloc.lower() == host.lower()

    def enter(self) -> bool:
        """Count a new call in; False when the cap is reached (the call is refused)."""
        if self.open_calls >= self.max_calls:
            return False
        self.open_calls += 1
        return True

    def leave(self) -> None:
        """A call ended."""
        self.open_calls = max(0, self.open_calls - 1)
