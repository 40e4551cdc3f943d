"""``strands-voice demo --serve --runtime-arn``: the page served locally hands out presigned URLs for the
runtime's ``/ws``; a URL it hands out is accepted by the SigV4-checking stand-in and a call goes through it
to the app; an expired or tampered one is refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.credentials import Credentials
from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY, AgentCoreStandIn
from support.call import START
from support.runtime_app import ARN, runtime_app
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.timeout(60)

SESSION = "page-session-0123456789abcdef0123456789"


def _page(endpoint_url: str, **options: Any) -> Any:
    from agentcore_app.app import STATIC_DIR
    from kokoro_endpoint.serving.runner import running_server
    from strands_voice_tools.runtime.page import page_app
    from strands_voice_tools.runtime.signing import Signer, runtime_target

    target = runtime_target(ARN, endpoint_url=endpoint_url)
    signer = Signer(Credentials(ACCESS_KEY, SECRET_KEY))
    return running_server(page_app(target, signer, STATIC_DIR, invoke=lambda s, b: iter([b]), **options))


@pytest.fixture
def app_ws() -> Iterator[str]:
    with runtime_app(["Hello there"]) as (url, _app):
        yield url


def test_the_page_names_its_call_url_route_and_serves_its_files() -> None:
    from strands_voice_tools.runtime.page import CALL_URL_META

    with _page("http://127.0.0.1:9") as page:
        index = httpx.get(page.base_url + "/")
        script = httpx.get(page.base_url + "/static/call.js")
        bad = httpx.get(page.base_url + "/call-url", params={"session_id": "short"})
    assert index.status_code == 200 and CALL_URL_META in index.text
    assert script.status_code == 200 and "callTarget" in script.text
    assert bad.status_code == 400


def test_a_url_the_page_hands_out_carries_a_call_to_the_app(app_ws: str) -> None:
    async def call(url: str) -> dict[str, Any]:
        async with connect(url) as socket:
            await socket.send(json.dumps(START))
            while True:
                event = json.loads(await socket.recv())
                if event["type"] == "listening":
                    return dict(event)

    async def flow() -> tuple[dict[str, Any], dict[str, Any], AgentCoreStandIn]:
        async with AgentCoreStandIn(app_ws).running() as stand_in:
            with _page(stand_in.endpoint_url) as page:
                async with httpx.AsyncClient() as client:
                    answer = await client.get(page.base_url + "/call-url", params={"session_id": SESSION})
            handed = answer.json()
            return handed, await call(handed["url"]), stand_in

    handed, listening, stand_in = asyncio.run(flow())
    assert "X-Amz-Signature=" in handed["url"] and "X-Amz-Expires=60" in handed["url"]
    assert handed["url"].startswith("ws://127.0.0.1:")
    assert listening["session_id"] == SESSION
    assert stand_in.sessions == [SESSION] and stand_in.refused == []


def test_an_expired_or_tampered_url_is_refused(app_ws: str) -> None:
    async def refused(url: str) -> int:
        with pytest.raises(InvalidStatus) as error:
            async with connect(url):
                pass
        return int(error.value.response.status_code)

    async def handed_out(endpoint_url: str, expires_s: int) -> str:
        with _page(endpoint_url, expires_s=expires_s) as page:
            async with httpx.AsyncClient() as client:
                answer = await client.get(page.base_url + "/call-url", params={"session_id": SESSION})
        return str(answer.json()["url"])

    async def flow() -> list[str]:
        async with AgentCoreStandIn(app_ws).running() as stand_in:
            tampered = (await handed_out(stand_in.endpoint_url, 60)).replace(SESSION, SESSION[::-1])
            assert await refused(tampered) == 403
            short_lived = await handed_out(stand_in.endpoint_url, 1)
            await asyncio.sleep(2.1)  # past its one second, whatever the machine's load
            assert await refused(short_lived) == 403
            return stand_in.refused

    reasons = asyncio.run(flow())
    assert reasons == [
        "The request signature we calculated does not match the signature you provided.",
        "Request has expired",
    ]


def test_typed_turns_go_to_the_runtime_with_the_pages_session() -> None:
    from strands_voice_tools.runtime.signing import SESSION_HEADER

    with _page("http://127.0.0.1:9") as page:
        carried = httpx.post(
            page.base_url + "/invocations", content=b'{"prompt": "hi"}', headers={SESSION_HEADER: SESSION}
        )
        unnamed = httpx.post(page.base_url + "/invocations", content=b'{"prompt": "hi"}')
    assert carried.status_code == 200 and carried.content == b'{"prompt": "hi"}'
    assert carried.headers["content-type"].startswith("text/event-stream")
    assert unnamed.status_code == 400


def test_a_runtime_arn_without_serve_is_one_line(capsys: Any) -> None:
    from strands_voice_tools.cli import main

    assert main(["demo", "--runtime-arn", ARN]) == 1
    assert capsys.readouterr().err.strip() == (
        "strands-voice demo: error: --runtime-arn goes with --serve (the page calling the deployed runtime)"
    )
