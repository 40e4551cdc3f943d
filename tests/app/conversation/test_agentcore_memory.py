"""The AgentCore Memory conversation store (``CONVERSATION_STORE=agentcore-memory``) through the app, against
moto: in process (``mock_aws``) and as a server (``AWS_ENDPOINT_URL``, as a deployment points at an endpoint).

Two turns of one session are remembered and stored, sessions are isolated, an interrupted answer is
stored as what was heard, and the service failing mid-turn neither silences the answer nor breaks the
next turn (the failure is logged with its code). moto 5.2.5 ignores ``ListEvents``' metadata filter, which
bedrock-agentcore uses to restore a conversation, so these tests read the stored events directly instead
of restarting the app on them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from agentcore_app.conversation._store import ConversationStore
from agentcore_app.conversation._store_writes import STORE_WRITE_FAILED
from strands.session.session_manager import SessionManager
from support.conversation_model import HOLD, HoldingEcho
from support.conversation_store import (
    GUARD_S,
    REGION,
    SESSION_HEADER,
    ask,
    create_memory,
    heard_of,
    served_app,
    stored_messages,
    text_of,
)

from strands_voice.agent._answer_memory import remembered_text

pytestmark = pytest.mark.timeout(180)

SESSION_A = "memory-session-a-0123456789abcdef0123"
SESSION_B = "memory-session-b-0123456789abcdef0123"


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and a region; no endpoint override unless a test sets one."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def memory_id(aws_env: None) -> Iterator[str]:
    """A memory in an in-process moto (``mock_aws``)."""
    from moto import mock_aws

    with mock_aws():
        yield create_memory()


def memory_store(memory_id: str) -> ConversationStore:
    """The store the app reads from its environment for AgentCore Memory."""
    env = {"CONVERSATION_STORE": "agentcore-memory", "AGENTCORE_MEMORY_ID": memory_id, "AWS_REGION": REGION}
    return ConversationStore.from_env(env)


def test_two_turns_are_remembered_and_stored_and_sessions_are_isolated(memory_id: str) -> None:
    with served_app(HoldingEcho(), memory_store(memory_id)) as url:
        assert text_of(ask(url, "first", SESSION_A)) == "Heard: first."
        assert text_of(ask(url, "second", SESSION_A)) == "Heard: first / second."
        assert text_of(ask(url, "other", SESSION_B)) == "Heard: other."
    assert stored_messages(memory_id, SESSION_A) == [
        ("user", "first"),
        ("assistant", "Heard: first."),
        ("user", "second"),
        ("assistant", "Heard: first / second."),
    ]
    assert stored_messages(memory_id, SESSION_B) == [("user", "other"), ("assistant", "Heard: other.")]


def test_an_interrupted_answer_is_stored_as_what_was_heard(memory_id: str) -> None:
    model = HoldingEcho()
    with served_app(model, memory_store(memory_id)) as url:
        first: list[dict[str, Any]] = []
        speaking = threading.Event()

        def on_event(event: dict[str, Any]) -> None:
            if event["type"] == "audio_chunk":
                speaking.set()

        reader = threading.Thread(target=lambda: first.extend(ask(url, HOLD, SESSION_A, on_event=on_event)))
        reader.start()
        assert speaking.wait(GUARD_S)
        stop = {"action": "interrupt"}
        response = httpx.post(
            f"{url}/invocations", json=stop, headers={SESSION_HEADER: SESSION_A}, timeout=GUARD_S
        )
        assert response.json()["interrupted"] is True
        reader.join(GUARD_S)
        model.gate.set()
        heard = heard_of(first)
        assert heard is not None
        stored = stored_messages(memory_id, SESSION_A)
        assert stored == [("user", HOLD), ("assistant", remembered_text(heard).strip())]
        assert text_of(ask(url, "next", SESSION_A)) == f"Heard: {HOLD} / next."
    assert model.TAIL not in str(stored_messages(memory_id, SESSION_A))  # never written, never remembered


def test_an_answer_written_in_full_then_cut_while_speaking_is_stored_as_heard(memory_id: str) -> None:
    """The model has finished writing, the audio has not: the Stop rewrites the stored answer."""
    from support.instant_tts import InstantTTS

    release = threading.Event()  # the endpoint holds the second sentence's audio until the test ends
    prompt = "This first sentence is long enough to be spoken at once. Then a second one"
    model = HoldingEcho()
    store = memory_store(memory_id)
    with served_app(
        model, store, transport_factory=lambda: InstantTTS(answer_first=1, release=release)
    ) as url:
        first: list[dict[str, Any]] = []
        written = threading.Event()

        def on_event(event: dict[str, Any]) -> None:
            if event["type"] == "text_delta" and event["text"].startswith("one."):
                written.set()  # the model's last word: the answer is written in full

        reader = threading.Thread(target=lambda: first.extend(ask(url, prompt, SESSION_A, on_event=on_event)))
        reader.start()
        assert written.wait(GUARD_S)
        stop = {"action": "interrupt"}
        headers = {SESSION_HEADER: SESSION_A}
        assert httpx.post(f"{url}/invocations", json=stop, headers=headers, timeout=GUARD_S).json()[
            "interrupted"
        ]
        release.set()  # the held audio is dropped by now: the barge-in came first
        reader.join(GUARD_S)
        heard = heard_of(first)
        assert heard is not None and text_of(first) == f"Heard: {prompt}."  # written in full, then cut
        stored = stored_messages(memory_id, SESSION_A)
        assert stored == [("user", prompt), ("assistant", remembered_text(heard).strip())]
        assert stored[-1][1] != text_of(first)  # the second sentence was never played: never remembered
        assert text_of(ask(url, "next", SESSION_A)) == f"Heard: {prompt} / next."


class _FailingAnswers:
    """Makes AgentCore Memory refuse every answer's ``CreateEvent`` while ``failing`` is set."""

    def __init__(self) -> None:
        self.failing = False
        self.refused = 0

    def __call__(self, params: dict[str, Any], **_kwargs: Any) -> None:
        from botocore.exceptions import ClientError

        roles = [
            item["conversational"]["role"] for item in params.get("payload", []) if "conversational" in item
        ]
        if self.failing and "ASSISTANT" in roles:
            self.refused += 1
            error = {"Error": {"Code": "ServiceUnavailableException", "Message": "unavailable"}}
            raise ClientError(error, "CreateEvent")


class _FailingMemoryStore(ConversationStore):
    """The app's AgentCore Memory store, its data-plane client failing as :class:`_FailingAnswers` says."""

    fault: _FailingAnswers

    def session_manager(self, session_id: str) -> SessionManager | None:
        manager: Any = super().session_manager(session_id)
        manager.memory_client.gmdp_client.meta.events.register(
            "before-parameter-build.bedrock-agentcore.CreateEvent", self.fault
        )
        return manager  # type: ignore[no-any-return]


def test_the_service_failing_mid_turn_the_answer_is_spoken_and_the_next_turn_works(
    memory_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = _FailingMemoryStore(kind="agentcore-memory", memory_id=memory_id, region_name=REGION)
    object.__setattr__(store, "fault", _FailingAnswers())
    caplog.set_level(logging.ERROR, logger="agentcore_app.conversation._store_writes")
    with served_app(HoldingEcho(), store) as url:
        assert text_of(ask(url, "one", SESSION_A)) == "Heard: one."
        store.fault.failing = True  # the question is stored, then the service fails on the answer
        events = ask(url, "two", SESSION_A)
        store.fault.failing = False
        assert text_of(events) == "Heard: one / two."
        kinds = [e["type"] for e in events]
        assert "audio_chunk" in kinds and "error" not in kinds  # the answer was spoken in full
        assert store.fault.refused >= 1
        codes = [r.getMessage() for r in caplog.records if f"code=<{STORE_WRITE_FAILED}>" in r.getMessage()]
        assert codes and all(SESSION_A in line for line in codes)
        # The next turn works, with the whole conversation (the app's memory kept what the store refused).
        assert text_of(ask(url, "three", SESSION_A)) == "Heard: one / two / three."
    # The store lost only the refused answer; it remembers nothing that was not said.
    assert stored_messages(memory_id, SESSION_A) == [
        ("user", "one"),
        ("assistant", "Heard: one."),
        ("user", "two"),
        ("user", "three"),
        ("assistant", "Heard: one / two / three."),
    ]


def test_two_turns_are_remembered_against_a_moto_server(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deployment's path: the app's clients reach the service at ``AWS_ENDPOINT_URL``."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{host}:{port}")
        memory = create_memory()
        with served_app(HoldingEcho(), memory_store(memory)) as url:
            assert text_of(ask(url, "first", SESSION_A)) == "Heard: first."
            assert text_of(ask(url, "second", SESSION_A)) == "Heard: first / second."
            assert text_of(ask(url, "other", SESSION_B)) == "Heard: other."
        assert [text for _, text in stored_messages(memory, SESSION_A)] == [
            "first",
            "Heard: first.",
            "second",
            "Heard: first / second.",
        ]
        assert stored_messages(memory, SESSION_B) == [("user", "other"), ("assistant", "Heard: other.")]
    finally:
        server.stop()
