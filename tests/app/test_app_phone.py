"""The phone line over a real socket: a fake phone (Twilio's side, tests/support/phone.py) against the app
on 127.0.0.1:0, with the library's Listener on plain engines (a loudness VAD, scripted texts; a tone is the
caller's voice) and the in-memory TTS endpoint.

The same call as ``/ws``: a spoken turn is answered as μ-law media with a mark after each sentence, the
phone's marks come back; ``/ws`` takes the same stream told by its first frame; the TwiML ``session_id``
names the conversation; keys make a typed turn at ``#``; ``stop`` and every bad frame end the call with the
heard part remembered, the bad frames with a close code and reason.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.call import silence, tone
from support.conversation_model import HoldingEcho
from support.instant_tts import InstantTTS
from support.phone import FakePhone

pytestmark = pytest.mark.timeout(120)

SESSION = "phone-session-0123456789abcdef0123456789"


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[str, Any]]]:
    """``serve(model, texts) -> (base ws url, app)``: the app with scripted listening, on a free port."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from kokoro_endpoint.runner import running_server
    from support.call import scripted_listeners

    stack: list[Any] = []

    def start(model: Any, texts: list[str]) -> tuple[str, Any]:
        app = create_app(
            tts_url="ws://127.0.0.1:9",
            model=model,
            conversation_store=ConversationStore(kind="none"),
            transport_factory=InstantTTS,
            listener_factory=scripted_listeners(texts),
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        server = running_server(app)
        stack.append(server)
        return str(server.__enter__().base_url).replace("http://", "ws://"), app

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


async def spoken_turn(phone: FakePhone) -> None:
    """Speak (a tone), then keep the line open until the answer has been played and its marks returned."""
    await phone.speak(silence(0.3) + tone(0.6) + silence(0.1))
    for _ in range(400):
        await phone.speak(silence(0.02))
        if phone.of("mark") and len(phone.marks_returned) == len(phone.of("mark")) and not phone.playing():
            return
    raise AssertionError(f"no answer played: {[m['event'] for m in phone.received]}")


@pytest.mark.parametrize("path", ["/twilio", "/ws"])
def test_a_spoken_turn_is_answered_as_mulaw_media_with_a_mark_after_each_sentence(
    serve: Any, path: str
) -> None:
    url, app = serve(HoldingEcho(), ["What does it cost?"])

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + path, {"session_id": SESSION})
        await spoken_turn(phone)
        await phone.hang_up()
        return phone

    phone = asyncio.run(call())
    media = phone.of("media")
    assert media and all(m["streamSid"] == phone.stream_sid for m in phone.received)
    sizes = [len(base64.b64decode(m["media"]["payload"])) for m in media]
    assert max(sizes) == 160 and sum(sizes) % 4000 == 0  # 20 ms frames; InstantTTS: 0.5 s a request
    marks = [m["mark"]["name"] for m in phone.of("mark")]
    assert len(marks) == 1 and phone.marks_returned == marks  # one sentence ("Heard: ..."), played
    assert not phone.of("clear")
    agent = app.state.conversations._live[SESSION].agent
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert "What does it cost?" in str(agent.messages[0]["content"])
