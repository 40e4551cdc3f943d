"""A caller who leaves mid-answer stops the answer: the app barges in (``handler.interrupt()``, a Leg 1
``cancel``), the agent's run is cancelled and the TTS session closed.

The app runs over real HTTP; the TTS endpoint is a recording stand-in on 127.0.0.1:0 (a narrow test of the
app's client side: it must notice the close at once, even while the agent is still thinking). The real
endpoint with a disconnecting caller is covered by tests/reliability (caller disconnects mid-answer).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands.types.tools import ToolSpec
from strands_voice_protocol.sse import SSEDecoder
from support.stand_in_model import StandInModel

pytestmark = pytest.mark.timeout(120)

FIRST_SENTENCE = "This first sentence is long enough to be spoken on its own. "


class StallingModel(StandInModel):
    """Streams ``before`` word by word, then 'thinks' for ``stall_s``, then says one more sentence.

    Records when a stream ends early (cancelled or closed), i.e. when the app stopped the agent.
    """

    def __init__(self, before: str, stall_s: float = 60.0) -> None:
        super().__init__("stalling")
        self.before = before
        self.stall_s = stall_s
        self.streams = 0
        self.stopped = threading.Event()

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        self.streams += 1
        finished = False
        try:
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockStart": {"start": {}}}
            for word in self.before.split(" "):
                if word:
                    await asyncio.sleep(0.01)
                    yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
            await asyncio.sleep(self.stall_s)
            yield {"contentBlockDelta": {"delta": {"text": "And the end, much later."}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            finished = True
        finally:
            if not finished:
                self.stopped.set()


class RecordingTTS:
    """A Leg 1 stand-in: answers each synthesize with a little pcm16 at once; records sessions."""

    def __init__(self) -> None:
        self.open_sessions = 0
        self.sessions = 0
        self.texts: list[str] = []
        self.cancels = 0
        self._lock = threading.Lock()
        self.app = Starlette(routes=[WebSocketRoute("/ws", self._session)])

    async def _session(self, websocket: WebSocket) -> None:
        await websocket.accept()
        with self._lock:
            self.open_sessions += 1
            self.sessions += 1
        try:
            while True:
                message = json.loads(await websocket.receive_text())
                if message.get("type") == "close":
                    await websocket.close(1000)
                    return
                if message.get("type") == "cancel":
                    with self._lock:
                        self.cancels += 1
                    continue  # every request was answered at once: nothing is left to cancel
                rid = message["request_id"]
                with self._lock:
                    self.texts.append(message["text"])
                start = {
                    "type": "synthesis_start",
                    "request_id": rid,
                    "format": "pcm16",
                    "sample_rate": 24000,
                }
                await websocket.send_text(json.dumps({**start, "channels": 1}))
                await websocket.send_bytes(b"\x01\x00" * 2400)
                done = {"type": "synthesis_complete", "request_id": rid, "audio_bytes": 4800}
                await websocket.send_text(json.dumps({**done, "total_duration_s": 0.1, "elapsed_s": 0.0}))
        except WebSocketDisconnect:
            pass
        finally:
            with self._lock:
                self.open_sessions -= 1


@pytest.fixture
def tts() -> Iterator[tuple[RecordingTTS, str]]:
    from kokoro_endpoint.serving.runner import running_server

    recorder = RecordingTTS()
    with running_server(recorder.app) as server:
        yield recorder, f"ws://{server.host}:{server.port}/ws"


def _wait(condition: Any, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def _read_then_leave(base_url: str, until: str) -> list[dict[str, Any]]:
    """POST a prompt, read SSE events up to the first of type ``until``, then close the connection."""
    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=30.0)) as client,
        client.stream("POST", f"{base_url}/invocations", json={"prompt": "Go"}) as response,
    ):
        assert response.status_code == 200
        for data in response.iter_raw():
            events.extend(event.json() for event in decoder.feed(data))
            if any(event["type"] == until for event in events):
                break
    return events


@pytest.mark.parametrize(
    ("before", "until"),
    [
        # The agent is thinking after its first, already spoken sentence (the next word ends that
        # sentence for the chunker).
        (FIRST_SENTENCE + "Then", "audio_chunk"),
        ("", "agent_start"),  # the agent has said nothing yet
    ],
)
def test_app_disconnect_while_the_agent_thinks_stops_the_answer(
    tts: tuple[RecordingTTS, str], before: str, until: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice.agent._handler import VoiceCallbackHandler

    interrupts: list[bool] = []
    interrupt = VoiceCallbackHandler.interrupt

    def spy(self: VoiceCallbackHandler) -> bool:
        interrupts.append(interrupt(self))
        return interrupts[-1]

    monkeypatch.setattr(VoiceCallbackHandler, "interrupt", spy)
    recorder, tts_url = tts
    model = StallingModel(before, stall_s=60.0)
    app = create_app(tts_url=tts_url, model=model, silence_timeout=120)
    with running_server(app) as server:
        events = _read_then_leave(server.base_url, until)
        assert events[-1]["type"] == until
        # The app notices though no event is due for a minute: the agent's stream is cancelled and the
        # TTS session closed long before the model's 60 s stall would have ended on its own.
        assert model.stopped.wait(30.0), "the agent went on thinking for a caller who had left"
        # (Leaving right after agent_start may even beat the TTS handshake: then no session ever opens.)
        assert _wait(lambda: recorder.open_sessions == 0, 30.0), "the TTS session outlived the caller"
        time.sleep(0.5)
        assert recorder.open_sessions == 0
        assert recorder.sessions == (1 if before else recorder.sessions)
        assert recorder.texts == ([FIRST_SENTENCE.strip()] if before else [])
        # The disconnect path barged in: one interrupt of the answer in progress; the open session got
        # the Leg 1 cancel before it closed.
        assert interrupts == [True]
        assert recorder.cancels == (1 if before else recorder.cancels)

        # The app still serves the next caller (a short answer, read to the end this time).
        model.stall_s = 0.0
        decoder = SSEDecoder()
        with httpx.Client(timeout=httpx.Timeout(10.0, read=30.0)) as client:
            response = client.post(f"{server.base_url}/invocations", json={"prompt": "Again"})
        again = [event.json() for event in decoder.feed(response.content) + decoder.flush()]
        assert [e["type"] for e in again][-1] == "agent_end"
        assert not [e for e in again if e["type"] in ("error", "interrupted")]
        assert interrupts == [True], "a caller who read to the end is not interrupted"
        assert _wait(lambda: recorder.open_sessions == 0, 30.0)
