"""A phone call through the bridge: the fake phone (Twilio's side, played at real time, marks returned as
played) dials ``strands-voice phone-bridge``, which carries it signed through the SigV4-checking stand-in of
AgentCore's WebSocket data plane to the real app's ``/ws`` (told a Twilio stream by its first frame)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from botocore.credentials import Credentials
from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY, AgentCoreStandIn
from support.call import silence, tone
from support.phone import FakePhone
from support.runtime_app import ARN, runtime_app

pytestmark = pytest.mark.timeout(120)

SESSION = "phone-bridge-session-0123456789abcdef01234"
QUESTION = "What does it cost?"
LONG_ANSWER = (
    "The premium plan costs twenty five dollars every single month. You can cancel the plan at any time "
    "and pay no fee for it. It includes unlimited storage for all your photos and videos. Our support "
    "team is there for you by day and also by night."
)


async def _answered(phone: FakePhone) -> None:
    """Speak (a tone), then keep the line open until an answer has played and its marks came back."""
    await phone.speak(silence(0.3) + tone(0.6) + silence(0.1))
    for _ in range(500):
        await phone.speak(silence(0.02))
        if phone.of("mark") and len(phone.marks_returned) == len(phone.of("mark")) and not phone.playing():
            return
    raise AssertionError(f"no answer played: {[m['event'] for m in phone.received]}")


async def _listen_until(phone: FakePhone, done: Callable[[], bool], within_s: float = 30.0) -> None:
    """Keep the line open (silence at real time) until ``done()``."""
    for _ in range(round(within_s / 0.02)):
        if done():
            return
        await phone.speak(silence(0.02))
    raise AssertionError(f"not done: {[m['event'] for m in phone.received if m['event'] != 'media']}")


@asynccontextmanager
async def _bridge(app_ws: str) -> AsyncIterator[tuple[str, AgentCoreStandIn, Any]]:
    """The stand-in before the app, the bridge before the stand-in: yields the bridge's URL."""
    from strands_voice_tools.phone_bridge import PhoneBridge
    from strands_voice_tools.runtime.signing import Signer, runtime_target

    async with AgentCoreStandIn(app_ws).running() as stand_in:
        target = runtime_target(ARN, endpoint_url=stand_in.endpoint_url)
        bridge = PhoneBridge(target, Signer(Credentials(ACCESS_KEY, SECRET_KEY)))
        async with bridge.serving("127.0.0.1", 0) as port:
            yield f"ws://127.0.0.1:{port}/stream", stand_in, bridge


@pytest.mark.parametrize("session", [SESSION, "caller-15551234567"])  # the second: under AgentCore's 33
def test_a_phone_call_through_the_bridge_is_heard_answered_and_its_marks_returned(session: str) -> None:
    from strands_voice_tools.phone_bridge import session_for

    async def call(app_ws: str) -> tuple[FakePhone, AgentCoreStandIn, Any]:
        async with _bridge(app_ws) as (url, stand_in, bridge):
            phone = await FakePhone.dial(url, {"session_id": session})
            await _answered(phone)
            await phone.hang_up()
            return phone, stand_in, bridge

    with runtime_app([QUESTION]) as (app_ws, app):
        phone, stand_in, bridge = asyncio.run(call(app_ws))
        agent: Any = app.state.conversations._live[session].agent  # the TwiML's name for it

    runtime_session = session_for({"start": {"customParameters": {"session_id": session}}})
    assert stand_in.refused == [] and stand_in.sessions == [runtime_session] and bridge.calls == 1
    media = phone.of("media")
    assert media and all(m["streamSid"] == phone.stream_sid for m in phone.received)
    assert max(len(base64.b64decode(m["media"]["payload"])) for m in media) == 160
    marks = [m["mark"]["name"] for m in phone.of("mark")]
    assert marks and phone.marks_returned == marks
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert QUESTION in str(agent.messages[0]["content"])
    assert QUESTION in str(agent.messages[1]["content"])  # HoldingEcho: "Heard: <question>."


def test_stop_please_through_the_bridge_clears_the_phone_and_the_question_is_answered() -> None:
    from agentcore_app.scripted import ScriptedModel

    questions = ["Tell me about the premium plan.", "Stop please. What does it cost?"]
    model = ScriptedModel(text=LONG_ANSWER, first_sentence_s=0.2, total_s=0.6)

    async def call(app_ws: str) -> tuple[FakePhone, float]:
        async with _bridge(app_ws) as (url, _stand_in, _relay):
            phone = await FakePhone.dial(url, {"session_id": SESSION})
            await phone.speak(silence(0.3) + tone(0.6))
            await _listen_until(phone, lambda: len(phone.played) >= 40)  # 0.8 s of the answer played
            barge = time.monotonic()
            await phone.speak(tone(1.2))
            answers = lambda: {name.split(".")[0] for _, name in phone.played_marks}  # noqa: E731
            await _listen_until(phone, lambda: len(answers()) == 2)  # the second answer is being played
            await phone.hang_up()
            return phone, barge

    with runtime_app(questions, model) as (app_ws, app):
        phone, barge = asyncio.run(call(app_ws))
        messages = app.state.conversations._live[SESSION].agent.messages

    assert phone.clears and phone.clears[0] > barge  # cleared once the caller spoke over the answer
    asked = [str(m["content"]) for m in messages if m["role"] == "user"]
    assert len(asked) == 2 and questions[1] in asked[1]
    assert any(at > phone.clears[-1] for at, _ in phone.played)  # the second answer played after it
