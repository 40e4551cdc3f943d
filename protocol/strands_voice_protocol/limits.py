"""Limits both ends of Leg 1 agree on, each kept once.

The endpoint's settings default to these and the library sizes its requests and keepalive from them, so a
change here moves both sides together.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "IDLE_TIMEOUT_S",
    "KEEPALIVE_S",
    "MAX_REQUEST_ID_CHARS",
    "MAX_SPEED",
    "MAX_TEXT_CHARS",
    "MIN_SPEED",
]

#: The most characters one ``synthesize`` may carry (the endpoint's default ``max_text_chars``).
MAX_TEXT_CHARS: Final = 5000

#: The slowest and fastest ``speed`` a request may ask for.
MIN_SPEED: Final = 0.5
MAX_SPEED: Final = 2.0

#: Seconds an endpoint session may sit with nothing to do and no frame before it is closed.
IDLE_TIMEOUT_S: Final = 300.0

#: Seconds between a client's keepalive messages while nothing is owed: well inside the idle timeout, so
#: a keepalive lost or delayed by a busy loop still leaves four more before the endpoint gives up.
KEEPALIVE_S: Final = IDLE_TIMEOUT_S / 5

#: The longest ``request_id`` a client may send. A request id is visible ASCII (``!`` to ``~``: no spaces,
#: no controls), so it can go into an HTTP header and a log line as it is.
MAX_REQUEST_ID_CHARS: Final = 128
