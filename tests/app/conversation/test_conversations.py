"""A conversation per AgentCore session: memory across invocations and restarts, isolation, hostile ids
refused, a new invocation barges in, the Stop action, two sessions never wait on each other, and the S3
store against moto. The TTS endpoint is in-memory (:mod:`instant_tts`): these tests are about the app."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentcore_app.conversation._store import ConversationStore, InvalidSessionIdError, validate_session_id
from support.conversation_model import HOLD, HoldingEcho
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.timeout(120)

GUARD_S = 60.0
SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
SESSION_A = "a" * 33
SESSION_B = "session-b-0123456789abcdef0123456789"


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """``serve(model, store) -> base_url``: the example app on a free port (stopped after the test)."""
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    stack: list[Any] = []

    def start(model: Any, store: ConversationStore) -> str:
        app = create_app(
            tts_url="ws://127.0.0.1:9", model=model, conversation_store=store, transport_factory=InstantTTS
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        server = running_server(app)
        stack.append(server)
        return str(server.__enter__().base_url)

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["text"] for e in events if e["type"] == "text_delta").strip()


_INVOKE: list[Callable[..., tuple[int, list[dict[str, Any]]]]] = []


@pytest.fixture(autouse=True)
def _invoke_helper(invoke: Any) -> None:
    _INVOKE[:] = [invoke]


def ask(url: str, prompt: str, session_id: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    status, events = _INVOKE[0](url, {"prompt": prompt}, session_id=session_id, **kwargs)
    assert status == 200, events
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    return events


def test_one_session_remembers_other_sessions_are_isolated_and_a_restart_keeps_it(
    serve: Callable[..., str], tmp_path: Path
) -> None:
    store = ConversationStore(directory=tmp_path / "store")
    url = serve(HoldingEcho(), store)
    assert text_of(ask(url, "first", SESSION_A)) == "Heard: first."
    assert text_of(ask(url, "second", SESSION_A)) == "Heard: first / second."
    assert text_of(ask(url, "other", SESSION_B)) == "Heard: other."
    assert text_of(ask(url, "one-off")) == "Heard: one-off."  # no header: a conversation of its own
    assert text_of(ask(url, "one-off again")) == "Heard: one-off again."
    stored = sorted(p.name for p in (tmp_path / "store").iterdir())
    assert stored == [f"session_{SESSION_A}", f"session_{SESSION_B}"]
    # A restarted app (a new process's app on the same store) continues the conversation.
    again = serve(HoldingEcho(), store)
    assert text_of(ask(again, "third", SESSION_A)) == "Heard: first / second / third."


HOSTILE_IDS = [
    "../../etc/passwd",
    "..",
    ".hidden",
    "a/b",
    "a\\b",
    "/abs",
    "%2e%2e%2fescape",
    "a b",
    "a\tb",
    "é" * 40,
    "x" * 257,
    "-leading-dash",
    "session\u2215slash",
]


@pytest.mark.parametrize("session_id", HOSTILE_IDS)
def test_hostile_session_ids_are_refused(session_id: str) -> None:
    with pytest.raises(InvalidSessionIdError):
        validate_session_id(session_id)


def test_hostile_session_ids_never_reach_the_store(serve: Callable[..., str], tmp_path: Path) -> None:
    store_dir = tmp_path / "inside" / "store"
    url = serve(HoldingEcho(), ConversationStore(directory=store_dir))
    with httpx.Client(timeout=GUARD_S) as client:
        for session_id in HOSTILE_IDS:
            if session_id != session_id.strip() or not session_id.isascii():
                continue  # not a valid HTTP header value: the client refuses to send it
            headers = {SESSION_HEADER: session_id}
            response = client.post(f"{url}/invocations", json={"prompt": "hi"}, headers=headers)
            assert response.status_code == 400, session_id
            assert response.json()["code"] == "invalid_request"
    assert list(tmp_path.rglob("*")) == []  # nothing written anywhere, the store not even created


def test_a_new_invocation_barges_in_on_the_answer_still_speaking(serve: Callable[..., str]) -> None:
    model = HoldingEcho()
    url = serve(model, ConversationStore(kind="none"))
    first: list[dict[str, Any]] = []
    speaking = threading.Event()

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "audio_chunk":
            speaking.set()

    reader = threading.Thread(target=lambda: first.extend(ask(url, HOLD, SESSION_A, on_event=on_event)))
    reader.start()
    assert speaking.wait(GUARD_S)
    second = ask(url, "next", SESSION_A)
    model.gate.set()
    reader.join(GUARD_S)
    kinds = [e["type"] for e in first]
    assert "interrupted" in kinds and kinds[-2:] == ["audio_end", "agent_end"]
    assert model.TAIL not in text_of(first)  # the first answer's agent was cancelled
    heard = next(e for e in first if e["type"] == "interrupted")["heard_text"]
    assert "interrupted" not in [e["type"] for e in second]
    # The second answer saw the first question; the first answer is remembered as what was heard.
    assert text_of(second) == f"Heard: {HOLD} / next."
    assert model.most_at_once == 1
    third = ask(url, "and?", SESSION_A)
    assert text_of(third) == f"Heard: {HOLD} / next / and?."
    assert heard == "" or f"Heard: {HOLD}.".startswith(heard)


def test_the_stop_action_interrupts_the_session_answer(serve: Callable[..., str]) -> None:
    model = HoldingEcho()
    url = serve(model, ConversationStore(kind="none"))
    first: list[dict[str, Any]] = []
    speaking = threading.Event()
    reader = threading.Thread(
        target=lambda: first.extend(
            ask(url, HOLD, SESSION_A, on_event=lambda e: e["type"] == "audio_chunk" and speaking.set())
        )
    )
    reader.start()
    assert speaking.wait(GUARD_S)
    with httpx.Client(timeout=GUARD_S) as client:
        stop = {"action": "interrupt"}
        other = client.post(f"{url}/invocations", json=stop, headers={SESSION_HEADER: SESSION_B})
        assert other.json() == {"type": "interrupt_result", "interrupted": False}  # B speaks nothing
        response = client.post(f"{url}/invocations", json=stop, headers={SESSION_HEADER: SESSION_A})
        assert response.status_code == 200 and response.json()["interrupted"] is True
        assert client.post(f"{url}/invocations", json=stop).status_code == 400  # no session: nothing to stop
    reader.join(GUARD_S)
    model.gate.set()
    assert not reader.is_alive() and "interrupted" in [e["type"] for e in first]
    assert model.TAIL not in text_of(first)


def test_two_sessions_never_wait_on_each_other(serve: Callable[..., str]) -> None:
    model = HoldingEcho()
    url = serve(model, ConversationStore(kind="none"))
    held: list[dict[str, Any]] = []
    speaking = threading.Event()
    reader = threading.Thread(
        target=lambda: held.extend(
            ask(url, HOLD, SESSION_A, on_event=lambda e: e["type"] == "audio_chunk" and speaking.set())
        )
    )
    reader.start()
    assert speaking.wait(GUARD_S)
    # Session A's answer is held mid-writing (its gate is shut): session B answers in full meanwhile.
    assert text_of(ask(url, "quick", SESSION_B)) == "Heard: quick."
    assert reader.is_alive() and not held
    model.gate.set()
    reader.join(GUARD_S)
    assert text_of(held).endswith(model.TAIL) and "interrupted" not in [e["type"] for e in held]


def test_the_s3_store_keeps_a_conversation_against_moto(monkeypatch: pytest.MonkeyPatch) -> None:
    import boto3
    from moto import mock_aws
    from strands import Agent

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="voice-conversations")
        env = {"CONVERSATION_STORE": "s3", "CONVERSATION_BUCKET": "voice-conversations"}
        env["AWS_REGION"] = "us-east-1"
        store = ConversationStore.from_env(env)
        assert store.prefix == "conversations/"

        def agent(session_id: str) -> Agent:
            manager = store.session_manager(session_id)
            return Agent(model=HoldingEcho(), session_manager=manager, callback_handler=None)

        agent(SESSION_A)("one")
        assert str(agent(SESSION_A)("two")).strip() == "Heard: one / two."  # a new agent: loaded from S3
        listing = boto3.client("s3").list_objects_v2(Bucket="voice-conversations")
        keys = [item["Key"] for item in listing["Contents"]]
        assert keys and all(key.startswith(f"conversations/session_{SESSION_A}/") for key in keys)
        assert str(agent(SESSION_B)("three")).strip() == "Heard: three."
