"""Who may open a spoken call: the page's own origin (not a foreign page), at most ``max_calls`` at once,
and no frame larger than the server reads, before ``start`` too."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from support.call import START, scripted_listeners
from support.conversation_model import HoldingEcho
from support.instant_tts import InstantTTS
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def served() -> Iterator[Any]:
    """``served(admission) -> (ws_url, http_host)``: the app with scripted listening on a free port, its
    server reading at most the call's frame size."""
    from agentcore_app.app import create_app
    from agentcore_app.call import MAX_FRAME_BYTES
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    stack: list[Any] = []

    def start(admission: Any) -> tuple[str, str]:
        app = create_app(
            tts_url="ws://127.0.0.1:9",
            model=HoldingEcho(),
            conversation_store=ConversationStore(kind="none"),
            transport_factory=InstantTTS,
            listener_factory=scripted_listeners(["hello"]),
            call_admission=admission,
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        server = running_server(app, ws_max_size=MAX_FRAME_BYTES)
        stack.append(server)
        base = str(server.__enter__().base_url)
        return base.replace("http://", "ws://") + "/ws", base.removeprefix("http://")

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


async def listening(url: str, origin: str | None = None) -> bool:
    """Whether a call opened with this ``Origin`` gets ``listening``."""
    headers = {"Origin": origin} if origin is not None else None
    try:
        async with connect(url, additional_headers=headers) as ws:
            await ws.send(json.dumps(START))
            return json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "listening"
    except InvalidStatus as refused:
        assert refused.response.status_code == 403
        return False


def test_a_foreign_page_cannot_open_a_call_and_the_own_page_and_a_phone_can(served: Any) -> None:
    from agentcore_app.call import CallAdmission

    # Calls back to back: a cap above one, so a call not yet counted out cannot refuse the next.
    url, host = served(CallAdmission(max_calls=4, allowed_origins=frozenset({"https://app.example.com"})))
    assert not asyncio.run(listening(url, "https://evil.example.net"))
    assert asyncio.run(listening(url, f"http://{host}"))  # the page the app itself serves
    assert asyncio.run(listening(url, "https://app.example.com"))  # on the allow-list
    assert asyncio.run(listening(url))  # no Origin: not a browser


def test_calls_past_the_cap_are_closed_as_busy_and_a_place_frees_when_one_ends(served: Any) -> None:
    from agentcore_app.call import CallAdmission

    url, _ = served(CallAdmission(max_calls=2))

    async def flood() -> tuple[list[int | None], bool]:
        sockets = [await connect(url) for _ in range(5)]
        codes: list[int | None] = []
        for ws in sockets:
            try:
                await ws.send(json.dumps(START))
                await asyncio.wait_for(ws.recv(), 10)
                codes.append(None)  # listening: admitted
            except ConnectionClosed:
                codes.append(ws.close_code)
                assert (ws.close_reason or "").startswith("busy: this server holds 2 call(s)")
        for ws in sockets:
            await ws.close()
        await asyncio.sleep(0.5)
        return codes, await listening(url)

    codes, later = asyncio.run(flood())
    assert codes == [None, None, 1013, 1013, 1013] and later


def test_a_call_past_the_cap_reads_why() -> None:
    from agentcore_app.call import busy_reason

    reason = busy_reason(16)
    assert reason.startswith("busy") and "16 call(s)" in reason
    assert len(reason.encode()) <= 123  # what a WebSocket close reason holds


def test_the_default_cap_is_the_measured_calls_per_core_times_the_cores() -> None:
    from agentcore_app.call import CALLS_PER_CORE, CallAdmission, default_max_calls

    assert default_max_calls(8) == int(CALLS_PER_CORE * 8)
    assert default_max_calls(1) >= 1  # a machine always takes one call
    assert CallAdmission.from_env({}).max_calls == default_max_calls()
    assert CallAdmission.from_env({"CALL_MAX_CALLS": "3"}).max_calls == 3


def test_a_frame_larger_than_a_call_takes_is_refused_before_start(served: Any) -> None:
    from agentcore_app.call import CallAdmission

    url, _ = served(CallAdmission())

    async def big() -> int | None:
        async with connect(url, max_size=None) as ws:
            await ws.send(b"\x00" * (1 << 20))  # 1 MiB before start
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return ws.close_code

    assert asyncio.run(big()) == 1009  # message too big, read no further
