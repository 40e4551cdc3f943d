"""Fixtures for the voice tests: a client-side recording wrapper around real transports, and a short text."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from strands_voice.transport import Frame, FrameTransport

#: Short, so the real Kokoro endpoint answers quickly on a shared CPU; three chunks for the chunker.
#: The first chunk is tiny, so its audio comes quickly even on a loaded machine.
SHORT_TEXT = (
    "Hi there! The Premium plan costs **$24.99** per month. You can cancel online, e.g. from the app."
)


class RecordingTransport:
    """Wraps a real transport and records what the client sent (and can drop the connection once, on cue)."""

    def __init__(self, inner: FrameTransport, *, drop_after_completes: int | None = None) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self.drop_after_completes = drop_after_completes
        self._completes = 0

    async def connect(self) -> None:
        await self.inner.connect()

    async def send(self, message: str) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def receive(self) -> Frame:
        frame = await self.inner.receive()
        if isinstance(frame, str) and '"synthesis_complete"' in frame:
            self._completes += 1
            if self.drop_after_completes is not None and self._completes == self.drop_after_completes:
                # Cut the TCP connection under the WebSocket: the next receive sees a dropped connection.
                self.inner._connection.transport.abort()  # type: ignore[attr-defined]
        return frame

    async def close(self) -> None:
        self.closed = True
        await self.inner.close()

    @property
    def synthesized(self) -> list[str]:
        return [m["text"] for m in self.sent if m.get("type") == "synthesize"]


@pytest.fixture
def recording() -> Iterator[Callable[..., Callable[[], RecordingTransport]]]:
    """``recording(url, **kw)`` → a transport factory; the transports it made are in ``factory.made``."""

    def make(url: str, **kwargs: Any) -> Callable[[], RecordingTransport]:
        from strands_voice.websocket import WebSocketTransport

        made: list[RecordingTransport] = []

        def factory() -> RecordingTransport:
            transport = RecordingTransport(WebSocketTransport(url), **kwargs)
            made.append(transport)
            return transport

        factory.made = made  # type: ignore[attr-defined]
        return factory

    yield make


@pytest.fixture
def short_text() -> str:
    """A short answer for the scripted model: three chunks, Markdown, a price and an abbreviation."""
    return SHORT_TEXT


@pytest.fixture(scope="module")
def text_limited_endpoint(onnx_engine: Any) -> Iterator[Any]:
    """A second REAL endpoint (same engine) whose per-request text limit is 45 characters."""
    from kokoro_endpoint.app import create_app
    from kokoro_endpoint.runner import running_server
    from kokoro_endpoint.settings import Settings

    with running_server(create_app(engine=onnx_engine, settings=Settings(max_text_chars=45))) as server:
        yield server
