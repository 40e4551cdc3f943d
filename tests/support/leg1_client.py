"""A Leg 1 test client shared by tests/endpoint and tests/reliability: read frames, group them per request.

``collect`` reads until a number of terminal frames arrived; ``replies`` groups what it read per request and
asserts the protocol's order on the way (start, audio only, one terminal frame; never two requests
interleaved).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection

TERMINAL = frozenset({"synthesis_complete", "synthesis_cancelled", "error"})


@dataclass
class Frame:
    """One frame received: a control object or audio, with its arrival time (monotonic)."""

    at: float
    control: dict[str, Any] | None = None
    audio: bytes | None = None


@dataclass
class Reply:
    """What one request got, in order."""

    request_id: str | None
    start: dict[str, Any] | None = None
    audio: bytearray = field(default_factory=bytearray)
    audio_frames: int = 0
    end: dict[str, Any] | None = None
    first_audio_at: float | None = None
    end_at: float | None = None
    # word_timestamps frames: (audio bytes received before the frame, the frame)
    words: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def kind(self) -> str | None:
        return None if self.end is None else str(self.end["type"])


async def collect(
    ws: ClientConnection,
    terminals: int,
    limit_s: float = 240.0,
    check_terminal: Callable[[str], None] | None = None,
) -> list[Frame]:
    """Read frames until ``terminals`` terminal control frames arrived (complete/cancelled/error).

    Args:
        ws: The open Leg 1 connection.
        terminals: How many terminal frames to wait for.
        limit_s: The longest the whole read may take.
        check_terminal: Called with the raw text of each terminal frame (the reliability tests' leak check).
    """
    frames: list[Frame] = []
    seen = 0

    async def read() -> None:
        nonlocal seen
        while seen < terminals:
            message = await ws.recv()
            now = time.monotonic()
            if isinstance(message, str):
                control = json.loads(message)
                assert isinstance(control, dict), message
                frames.append(Frame(now, control=control))
                if control["type"] in TERMINAL:
                    seen += 1
                    if check_terminal is not None:
                        check_terminal(message)
            else:
                frames.append(Frame(now, audio=message))

    await asyncio.wait_for(read(), limit_s)
    return frames


def replies(frames: Sequence[Frame]) -> list[Reply]:
    """Group frames by request, asserting the Leg 1 order: start, audio (and words), then one terminal frame.

    A terminal frame outside a request (bad input, a refused request, a cancel before the start) is a reply
    of its own.
    """
    out: list[Reply] = []
    current: Reply | None = None
    for frame in frames:
        if frame.audio is not None:
            assert current is not None and current.start is not None, "audio outside a request"
            if current.first_audio_at is None:
                current.first_audio_at = frame.at
            current.audio += frame.audio
            current.audio_frames += 1
            continue
        control = frame.control
        assert control is not None
        kind = control["type"]
        if kind == "synthesis_start":
            assert current is None, f"request {control['request_id']} started inside another: interleaved"
            current = Reply(control["request_id"], start=control)
        elif kind == "word_timestamps":
            assert current is not None and control["request_id"] == current.request_id, (
                "words outside a request"
            )
            current.words.append((len(current.audio), control))
        elif kind in TERMINAL:
            rid = control.get("request_id")
            if current is None:
                out.append(Reply(rid, end=control, end_at=frame.at))
                continue
            assert rid == current.request_id, f"{kind} for {rid} inside {current.request_id}"
            current.end = control
            current.end_at = frame.at
            out.append(current)
            current = None
        else:
            raise AssertionError(f"unexpected frame {control}")
    assert current is None, "a request never ended"
    return out
