"""Time one voice answer through the AgentCore app over Leg 3 (SSE), as a caller sees it.

Every event is stamped with its arrival on the client's clock, next to the server's own ``t_ms``, so the
benchmark can put text arrival and audio arrival on one timeline.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_protocol.sse import SSEDecoder, SSEEvent
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice_tools.audio_analysis import FirstHeard

__all__ = ["AudioArrival", "TextArrival", "VoiceRun", "run_voice_request"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TextArrival:
    """A ``text_delta`` as it arrived: client seconds since the request, server ``t_ms``, the text."""

    arrival_s: float
    t_ms: float
    text: str


@dataclass(frozen=True, slots=True)
class AudioArrival:
    """An ``audio_chunk`` as it arrived.

    Attributes:
        arrival_s: Client seconds since the request was sent.
        t_ms: The server's ``t_ms``.
        sentence: The text chunk it speaks.
        audio_bytes: Encoded audio bytes (after base64 decoding).
        wire_bytes: Bytes of the whole SSE event on Leg 3 (``data: {json}\\n\\n``).
    """

    arrival_s: float
    t_ms: float
    sentence: int
    audio_bytes: int
    wire_bytes: int


@dataclass
class VoiceRun:
    """Everything one invocation streamed, with arrival times.

    Attributes:
        mode: ``bidi`` or ``batch``.
        format: The audio format asked for.
        texts: Text deltas in arrival order.
        audio: Audio chunks in arrival order.
        sentences: ``sentence_complete`` events by sentence index: (text, duration_s).
        agent_end: The ``agent_end`` event, when it came.
        audio_duration_s: ``audio_end``'s duration, when it came.
        response_bytes: Every byte of the SSE response body.
        errors: ``error`` events.
        total_s: Client seconds from the request to the end of the response.
        started_at: ``time.perf_counter()`` when the request was sent (the origin of every ``arrival_s``).
    """

    mode: str
    format: str
    texts: list[TextArrival] = field(default_factory=list)
    audio: list[AudioArrival] = field(default_factory=list)
    sentences: dict[int, tuple[str, float]] = field(default_factory=dict)
    agent_end: dict[str, Any] | None = None
    audio_duration_s: float | None = None
    response_bytes: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    total_s: float = 0.0
    started_at: float = 0.0
    heard: FirstHeard = field(default_factory=lambda: FirstHeard(SAMPLE_RATE))

    @property
    def heard_s(self) -> float | None:
        """Client seconds from the request to the first audible sound (pcm16 runs; issue 15)."""
        return self.heard.heard_at

    @property
    def ttfa_s(self) -> float | None:
        """Client seconds from sending the request to the first audio chunk."""
        return self.audio[0].arrival_s if self.audio else None

    @property
    def server_ttfa_ms(self) -> float | None:
        """The server's ``t_ms`` of the first audio chunk."""
        return self.audio[0].t_ms if self.audio else None

    @property
    def audio_wire_bytes(self) -> int:
        """Bytes of all ``audio_chunk`` events on Leg 3."""
        return sum(chunk.wire_bytes for chunk in self.audio)

    def record(self, event: SSEEvent, arrival_s: float) -> None:
        """Add one decoded SSE event that arrived ``arrival_s`` after the request."""
        payload = event.json()
        if not isinstance(payload, dict):
            raise StrandsVoiceError("a Leg 3 event is not a JSON object")
        kind = payload.get("type")
        t_ms = float(payload.get("t_ms", 0.0))
        if kind == "text_delta":
            self.texts.append(TextArrival(arrival_s, t_ms, str(payload.get("text", ""))))
        elif kind == "audio_chunk":
            try:
                data = base64.b64decode(str(payload.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                raise StrandsVoiceError("an audio_chunk carries data that is not base64") from None
            audio_bytes = len(data)
            if self.format == "pcm16":
                self.heard.feed(arrival_s, data)
            wire_bytes = len(b"data: \n\n") + len(event.data.encode("utf-8"))
            self.audio.append(
                AudioArrival(arrival_s, t_ms, int(payload.get("sentence", 0)), audio_bytes, wire_bytes)
            )
        elif kind == "sentence_complete":
            index = int(payload.get("sentence", len(self.sentences)))
            self.sentences[index] = (str(payload.get("text", "")), float(payload.get("duration_s", 0.0)))
        elif kind == "audio_end":
            self.audio_duration_s = float(payload.get("duration_s", 0.0))
        elif kind == "agent_end":
            self.agent_end = payload
        elif kind == "error":
            self.errors.append(payload)


async def run_voice_request(
    client: httpx.AsyncClient,
    app_url: str,
    prompt: str,
    *,
    mode: str,
    audio_format: str = "pcm16",
    timeout_s: float = 600.0,
) -> VoiceRun:
    """POST one prompt to the app's ``/invocations`` and read its Leg 3 stream to the end.

    Args:
        client: The HTTP client (kept open across runs, like a browser keeps its connection).
        app_url: The app's base URL, ``http://host:port``.
        prompt: The prompt.
        mode: ``bidi`` or ``batch``.
        audio_format: ``pcm16``, ``mp3`` or ``opus`` (the ``format`` field).
        timeout_s: The longest the whole answer may take.

    Returns:
        The run, with arrival times.

    Raises:
        StrandsVoiceError: the app refused the request, or the stream did not finish in time.
    """
    run = VoiceRun(mode=mode, format=audio_format)
    decoder = SSEDecoder()
    body = {"prompt": prompt, "mode": mode, "format": audio_format}
    started = run.started_at = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            async with client.stream(
                "POST", f"{app_url}/invocations", json=body, headers={"Accept": "text/event-stream"}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise StrandsVoiceError(
                        f"the app answered HTTP {response.status_code}: {response.text[:200]}"
                    )
                async for raw in response.aiter_raw():
                    arrival = time.perf_counter() - started
                    run.response_bytes += len(raw)
                    for event in decoder.feed(raw):
                        run.record(event, arrival)
                for event in decoder.flush():
                    run.record(event, time.perf_counter() - started)
    except TimeoutError:
        raise StrandsVoiceError(f"the {mode} answer did not finish within {timeout_s} s") from None
    except httpx.HTTPError as error:
        raise StrandsVoiceError(f"the app could not be reached at {app_url}") from error
    run.total_s = time.perf_counter() - started
    logger.debug(
        "mode=<%s>, format=<%s>, ttfa_s=<%s>, chunks=<%d> | voice run done",
        mode,
        audio_format,
        run.ttfa_s,
        len(run.audio),
    )
    return run
