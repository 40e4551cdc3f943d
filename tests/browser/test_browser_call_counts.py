"""The page on a call: a final transcript that counts for no turn (``"counts": false``: a backchannel or a
noise said over the answer) is no question; the final after it is. A tiny call server on 127.0.0.1 speaks
the ``/ws`` frames; Chromium's fake microphone plays silence."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.browser import SAMPLE_RATE, microphone_chromium, microphone_page, page_routes

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

QUESTION = "What does it cost?"
BACKCHANNEL = "Uh-huh."
WAIT_MS = 60_000  # a hang guard on a shared CPU, not a timing assertion


@pytest.fixture(scope="module")
def mic_browser(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from strands_voice_protocol.audio import write_wav

    wav: Path = tmp_path_factory.mktemp("mic") / "silence.wav"
    write_wav(wav, bytes(2 * SAMPLE_RATE * 2), SAMPLE_RATE)
    with microphone_chromium(chromium_path, wav) as instance:
        yield instance


@pytest.fixture
def call_server() -> Iterator[str]:
    """The page, and a ``/ws`` that answers ``start`` with ``listening``, then sends a backchannel's final
    (``counts: false``) and a question's final, and holds the call until the page hangs up."""
    from kokoro_endpoint.serving.runner import running_server
    from starlette.applications import Starlette
    from starlette.routing import WebSocketRoute
    from starlette.websockets import WebSocket

    async def call(socket: WebSocket) -> None:
        await socket.accept()
        started = False
        while (message := await socket.receive())["type"] != "websocket.disconnect":
            if not started and message.get("text") is not None:  # `start`; audio frames follow it
                started = True
                await socket.send_json({"type": "listening", "t_ms": 0})
                backchannel = {"type": "transcript", "t_ms": 1, "text": BACKCHANNEL, "final": True}
                await socket.send_json({**backchannel, "counts": False})
                await asyncio.sleep(0.2)
                await socket.send_json({"type": "transcript", "t_ms": 2, "text": QUESTION, "final": True})

    app = Starlette(routes=[*page_routes(), WebSocketRoute("/ws", call)])
    with running_server(app) as server:
        yield server.base_url + "/"


def test_a_final_that_counts_for_no_turn_is_no_question(mic_browser: Any, call_server: str) -> None:
    with microphone_page(mic_browser, call_server) as session:
        session.page.click("#talk")
        session.page.wait_for_function("() => window.voiceStats.transcripts.length > 0", timeout=WAIT_MS)
        assert session.stats()["transcripts"] == [QUESTION]
        session.page.click("#talk")  # hang up
        session.wait_for_state("idle", timeout_s=30)
    assert session.console_errors == []
