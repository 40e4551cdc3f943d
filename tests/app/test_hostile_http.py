"""The example app's doors to hostile callers: ``POST`` takes JSON only (a cross-site form cannot post),
every ``POST`` body is bounded before it is read whole, and a call that named no session leaves no stored
conversation behind. The TTS endpoint is in-memory (:mod:`instant_tts`)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.call import START, Caller, scripted_listeners
from support.conversation_model import HoldingEcho
from support.http import chunked_huge_post, urllib_huge_post
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.timeout(120)

GUARD_S = 60.0


@pytest.fixture
def app_server(tmp_path: Path) -> Iterator[Any]:
    """The app (echoing model, file store under ``tmp_path/store``, scripted listening) on a free port."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(
        tts_url="ws://127.0.0.1:9",
        model=HoldingEcho(),
        conversation_store=ConversationStore(directory=tmp_path / "store"),
        transport_factory=InstantTTS,
        listener_factory=scripted_listeners(["unused"]),
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield server


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",  # what a cross-site <form enctype="text/plain"> or a no-cors fetch sends
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ],
)
def test_a_post_that_is_not_json_is_refused_with_one_error_event(
    app_server: Any, content_type: str | None
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    answer = httpx.post(
        f"{app_server.base_url}/invocations", content=b'{"prompt": "hi"}', headers=headers, timeout=GUARD_S
    )
    assert answer.status_code == 415, answer.text
    assert answer.json() == {**answer.json(), "type": "error", "code": "invalid_request", "t_ms": 0}


def test_json_with_a_charset_is_json(app_server: Any) -> None:
    headers = {"Content-Type": "application/json; charset=utf-8"}
    with httpx.stream(
        "POST",
        f"{app_server.base_url}/invocations",
        content=b'{"prompt": "hi"}',
        headers=headers,
        timeout=GUARD_S,
    ) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")


def test_a_64_mb_body_sent_whole_by_urllib_reads_its_413_error_event(app_server: Any) -> None:
    # urllib writes all 64 MB before it reads: the app answers, then discards the rest before closing.
    status, answer = urllib_huge_post(f"{app_server.base_url}/invocations")
    assert status == 413
    assert answer == {**answer, "type": "error", "code": "invalid_request"}


def test_a_64_mb_chunked_body_sent_whole_reads_its_413(app_server: Any) -> None:
    status, body = chunked_huge_post(app_server.port, "/invocations")
    assert status.startswith("HTTP/1.1 413"), status
    assert json.loads(body)["code"] == "invalid_request"


def test_a_body_past_the_bound_is_a_413_error_event(app_server: Any) -> None:
    from agentcore_app.streaming import MAX_BODY_BYTES

    body = b'{"prompt": "' + b"a" * MAX_BODY_BYTES + b'"}'
    answer = httpx.post(
        f"{app_server.base_url}/invocations",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=GUARD_S,
    )
    assert answer.status_code == 413
    assert answer.json() == {**answer.json(), "type": "error", "code": "invalid_request"}


def _typed_call(url: str, prompts: list[str]) -> tuple[str, list[str]]:
    """A call that types ``prompts`` one after another: its session id and the answers' text."""

    async def call() -> tuple[str, list[str]]:
        caller = await Caller.open(url)
        await caller.send(START)
        session_id = str((await caller.wait_for("listening"))["session_id"])
        for number, prompt in enumerate(prompts, 1):
            await caller.send({"type": "prompt", "prompt": prompt})
            await caller.wait_for("agent_end", number, within_s=GUARD_S)
        await caller.close()
        answers, text = [], ""
        for event in caller.events:
            if event["type"] == "text_delta":
                text += event["text"]
            elif event["type"] == "agent_end":
                answers.append(text.strip())
                text = ""
        return session_id, answers

    return asyncio.run(call())


def test_a_call_without_a_session_id_leaves_no_stored_conversation(app_server: Any, tmp_path: Path) -> None:
    ws_url = app_server.base_url.replace("http://", "ws://") + "/ws"
    session_id, answers = _typed_call(ws_url, ["first", "second"])
    assert session_id.startswith("call-")
    assert answers == ["Heard: first.", "Heard: first / second."]  # one conversation for the call
    named = "named-call-0123456789abcdef0123456789"
    assert _typed_call(f"{ws_url}?session_id={named}", ["kept"])[1] == ["Heard: kept."]
    stored = sorted(path.name for path in (tmp_path / "store").iterdir())
    assert stored == [f"session_{named}"]  # the named one only
