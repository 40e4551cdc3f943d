"""The wire constants of PROTOCOL.md, defined once: the Leg 1 route and the audio sample rate.

The endpoint serves them, the library connects to them, the tools measure them: all import them from here.
"""

from __future__ import annotations

from typing import Final

__all__ = ["BIDI_PATH", "SAMPLE_RATE"]

#: The Leg 1 bidirectional route (WebSocket; SageMaker forwards its HTTP/2 stream to it).
BIDI_PATH: Final = "/invocations-bidirectional-stream"

#: Samples per second of every PCM stream on the wire (16-bit signed little-endian, mono).
SAMPLE_RATE: Final = 24_000
