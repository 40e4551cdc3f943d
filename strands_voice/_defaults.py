"""The library's defaults that several signatures share, each stated once."""

from __future__ import annotations

from typing import Final

#: Seconds opening one connection to the TTS endpoint may take (the handler, the session, the transports).
CONNECT_TIMEOUT_S: Final = 10.0

#: Seconds the TTS endpoint may stay silent while a request's audio is owed.
SILENCE_TIMEOUT_S: Final = 30.0
