"""A phone call through the bridge: the fake phone (Twilio's side, played at real time, marks returned as
played) dials ``strands-voice phone-bridge``, which carries it signed through the SigV4-checking stand-in of
AgentCore's WebSocket data plane to the real app's ``/ws`` (told a Twilio stream by its first frame)."""

from __future__ import annotations

import asyncio
import base64
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


async def _answered(phone: FakePhone) -> None:
    """Speak (a tone), then keep the line open until an answer has played and its marks came back."""
    await phone.speak(silence(0.3) + tone(0.6) + silence(0.1))
    for _ in range(500):
        await phone.speak(silence(0.02))
        if phone.of("mark") and len(phone.marks_returned) == len(phone.of("mark")) and not phone.playing():
            return
    raise AssertionError(f"no answer played: {[m['event'] for m in phone.received]}")


def test_a_phone_call_through_the_bridge_is_heard_answered_and_its_marks_returned() -> None:
    from strands_voice_tools.phone_bridge import PhoneBridge
    from strands_voice_tools.runtime.signing import Signer, runtime_target

    async def call(app_ws: str) -> tuple[FakePhone, AgentCoreStandIn, PhoneBridge]:
        async with AgentCoreStandIn(app_ws).running() as stand_in:
            target = runtime_target(ARN, endpoint_url=stand_in.endpoint_url)
            bridge = PhoneBridge(target, Signer(Credentials(ACCESS_KEY, SECRET_KEY)))
            async with bridge.serving("127.0.0.1", 0) as port:
                phone = await FakePhone.dial(f"ws://127.0.0.1:{port}/stream", {"session_id": SESSION})
                await _answered(phone)
                await phone.hang_up()
                return phone, stand_in, bridge

    with runtime_app([QUESTION]) as (app_ws, app):
        phone, stand_in, bridge = asyncio.run(call(app_ws))
        agent: Any = app.state.conversations._live[SESSION].agent

    assert stand_in.refused == [] and stand_in.sessions == [SESSION] and bridge.calls == 1
    media = phone.of("media")
    assert media and all(m["streamSid"] == phone.stream_sid for m in phone.received)
    assert max(len(base64.b64decode(m["media"]["payload"])) for m in media) == 160
    marks = [m["mark"]["name"] for m in phone.of("mark")]
    assert marks and phone.marks_returned == marks
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert QUESTION in str(agent.messages[0]["content"])
    assert QUESTION in str(agent.messages[1]["content"])  # HoldingEcho: "Heard: <question>."
