"""``strands-voice phone-bridge``: Twilio's socket relayed, frame by frame and signed, through a local
stand-in of AgentCore's WebSocket data plane (SigV4 checked) to the runtime's ``/ws``."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from botocore.credentials import Credentials
from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY, SESSION_HEADER, AgentCoreStandIn
from support.runtime_app import ARN
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

pytestmark = pytest.mark.timeout(60)

CALL_SID = "CA" + "0123456789abcdef" * 2


def twilio(event: str, **fields: Any) -> str:
    return json.dumps({"event": event, "sequenceNumber": "1", **fields})


START = twilio(
    "start",
    streamSid="MZ" + "f" * 32,
    start={
        "callSid": CALL_SID,
        "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
    },
)


class EchoApp:
    """A ``/ws`` that echoes each frame and records what it got; a ``hang up`` frame closes with 4000."""

    def __init__(self) -> None:
        self.sessions: list[str | None] = []
        self.frames: list[str | bytes] = []
        self.closed: list[tuple[int, str]] = []

    async def __call__(self, socket: ServerConnection) -> None:
        assert socket.request is not None
        self.sessions.append(socket.request.headers.get(SESSION_HEADER))
        async for frame in socket:
            self.frames.append(frame)
            if frame == twilio("hang up"):
                await socket.close(4000, "the agent hung up")
                return
            await socket.send(frame)
        assert socket.protocol.close_rcvd is not None
        self.closed.append((socket.protocol.close_rcvd.code, socket.protocol.close_rcvd.reason))


@asynccontextmanager
async def bridged(app: EchoApp, secret: str = SECRET_KEY) -> AsyncIterator[tuple[str, AgentCoreStandIn]]:
    """The app, the stand-in before it, the bridge before that: yields the bridge's URL."""
    from strands_voice_tools.phone_bridge import PhoneBridge
    from strands_voice_tools.runtime.signing import Signer, runtime_target

    async with serve(app, "127.0.0.1", 0) as server:
        app_url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}/ws"
        async with AgentCoreStandIn(app_url).running() as stand_in:
            target = runtime_target(ARN, endpoint_url=stand_in.endpoint_url)
            bridge = PhoneBridge(target, Signer(Credentials(ACCESS_KEY, secret)))
            async with bridge.serving("127.0.0.1", 0) as port:
                yield f"ws://127.0.0.1:{port}/media", stand_in


def test_frames_go_both_ways_in_order_with_the_call_as_the_session() -> None:
    app = EchoApp()

    async def call() -> list[str | bytes]:
        async with bridged(app) as (url, stand_in), connect(url) as phone:
            await phone.send(twilio("connected", protocol="Call", version="1.0.0"))
            await phone.send(START)
            media = [twilio("media", media={"payload": "//8=", "chunk": str(n)}) for n in range(5)]
            for frame in media:
                await phone.send(frame)
            echoed = [await phone.recv() for _ in range(7)]
            await phone.close(1000, "call ended")
            await asyncio.sleep(0.2)
            assert stand_in.refused == []
            return echoed

    echoed = asyncio.run(call())
    assert [json.loads(frame)["event"] for frame in echoed] == ["connected", "start"] + ["media"] * 5
    assert app.frames == echoed
    assert app.sessions == [f"twilio-{CALL_SID}"]
    assert app.closed == [(1000, "call ended")]


def test_a_session_named_by_the_twiml_names_the_runtime_session() -> None:
    from strands_voice_tools.phone_bridge import session_for

    named = "support-line-0123456789abcdef0123456789"
    start = json.loads(START)
    start["start"]["customParameters"] = {"session_id": named}
    assert session_for(start) == named
    assert session_for(json.loads(START)) == f"twilio-{CALL_SID}"
    start["start"]["customParameters"] = {"session_id": "caller-15551234567"}
    short = session_for(start)
    assert short.startswith("phone-caller-15551234567-") and len(short) >= 33
    assert session_for(start) == short  # the same name, the same runtime session, call after call


def test_the_runtime_closing_closes_the_phone_with_its_code_and_reason() -> None:
    async def call() -> tuple[int, str]:
        async with bridged(EchoApp()) as (url, _stand_in), connect(url) as phone:
            await phone.send(START)
            await phone.recv()
            await phone.send(twilio("hang up"))
            await asyncio.wait_for(phone.wait_closed(), 10)
            assert phone.protocol.close_rcvd is not None
            return phone.protocol.close_rcvd.code, phone.protocol.close_rcvd.reason

    assert asyncio.run(call()) == (4000, "the agent hung up")


def test_a_refused_signature_ends_the_call_with_a_reason() -> None:
    async def call() -> tuple[int, str, list[str]]:
        async with bridged(EchoApp(), secret="wrong") as (url, stand_in), connect(url) as phone:
            await phone.send(START)
            await asyncio.wait_for(phone.wait_closed(), 10)
            assert phone.protocol.close_rcvd is not None
            return phone.protocol.close_rcvd.code, phone.protocol.close_rcvd.reason, stand_in.refused

    code, reason, refused = asyncio.run(call())
    assert (code, reason) == (1011, "the agent cannot be reached")
    assert len(refused) == 1


def test_a_stream_that_is_not_twilio_is_closed_with_a_reason() -> None:
    async def call() -> tuple[int, str]:
        async with bridged(EchoApp()) as (url, _stand_in), connect(url) as phone:
            await phone.send(b"\x00\x01")
            await asyncio.wait_for(phone.wait_closed(), 10)
            assert phone.protocol.close_rcvd is not None
            return phone.protocol.close_rcvd.code, phone.protocol.close_rcvd.reason

    assert asyncio.run(call()) == (1008, "not a Twilio Media Streams frame")


def test_the_load_balancer_health_check_gets_200() -> None:
    async def check() -> int:
        async with bridged(EchoApp()) as (url, _stand_in), httpx.AsyncClient() as client:
            response = await client.get(url.replace("ws://", "http://").replace("/media", "/ping"))
            return response.status_code

    assert asyncio.run(check()) == 200


def test_the_command_serves_until_sigterm() -> None:
    command = [str(Path(sys.executable).with_name("strands-voice")), "phone-bridge", "--runtime-arn", ARN]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
    with subprocess.Popen([*command, "--port", "0"], stderr=subprocess.PIPE, text=True, env=env) as bridge:
        assert bridge.stderr is not None
        try:
            line = bridge.stderr.readline()
            match = re.match(r"phone bridge on ws://127\.0\.0\.1:(\d+)/ -> (\S+)", line)
            assert match and match.group(2) == ARN, line
            assert httpx.get(f"http://127.0.0.1:{match.group(1)}/ping").status_code == 200
        finally:
            bridge.send_signal(signal.SIGTERM)
            code = bridge.wait(30)
    assert code == 0
