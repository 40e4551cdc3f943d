"""Faults around conversations: nothing lost that was heard, nothing remembered that was not.

- The app killed (SIGKILL) mid-answer: ``python -m agentcore_app`` with the file store, killed while its
  answer is being spoken. The store then holds the question and nothing of the answer; the restarted app
  remembers that answer as nothing heard (an ellipsis) and the conversation goes on.
- Two invocations on one session id at the same moment: one answer at a time, and the store holds both
  turns in order, each answer as spoken in full or, when barged in on, as what was heard.
- A store that refuses writes: the answers are spoken, the failure is logged with its code, the
  conversation goes on in the app's memory, and the store holds nothing it did not accept.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from agentcore_app.conversation._store import ConversationStore
from agentcore_app.conversation._store_writes import STORE_WRITE_FAILED
from strands.session.file_session_manager import FileSessionManager
from strands.session.session_manager import SessionManager
from strands_voice_protocol.sse import SSEDecoder
from support.conversation_model import HoldingEcho
from support.conversation_store import GUARD_S, SESSION_HEADER, ask, heard_of, served_app, text_of
from support.endpoint_process import free_port

from strands_voice.agent._answer_memory import NOTHING_HEARD, remembered_text

pytestmark = pytest.mark.timeout(300)

SESSION = "fault-session-0123456789abcdef0123456789"
QUESTION = "What will the weather be like this weekend?"


def stored(directory: Path, session_id: str = SESSION) -> list[tuple[str, str]]:
    """The file store's conversation for ``session_id``: (role, text) per message, in order (read only)."""
    folder = directory / f"session_{session_id}" / "agents" / "agent_default" / "messages"
    files = sorted(folder.glob("message_*.json"), key=lambda path: int(path.stem.removeprefix("message_")))
    messages = [json.loads(path.read_text())["message"] for path in files]
    return [(m["role"], "".join(b.get("text", "") for b in m["content"]).strip()) for m in messages]


class AppProcess:
    """``python -m agentcore_app`` on 127.0.0.1 with the file store, as its own process."""

    def __init__(self, store_dir: Path, tts_url: str, model: str, log_path: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "HOST": "127.0.0.1",
            "PORT": str(self.port),
            "LOG_LEVEL": "WARNING",
            "CONVERSATION_STORE": "file",
            "CONVERSATION_DIR": str(store_dir),
            "TTS_ENDPOINT_URL": tts_url,
            "TTS_SILENCE_TIMEOUT_S": "120",
            "VOICE_MODEL": model,
            "HF_HUB_OFFLINE": "1",
        }
        with open(log_path, "ab") as log:
            command = [sys.executable, "-m", "agentcore_app"]
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 120.0
        while not self._ready():
            assert self.proc.poll() is None, f"the app exited with {self.proc.returncode}; see {log_path}"
            assert time.monotonic() < deadline, f"the app was not ready in time; see {log_path}"
            time.sleep(0.2)

    def _ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/ping", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """SIGKILL: nothing is flushed, nothing closed."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(15)


@pytest.fixture
def app_processes() -> Iterator[list[AppProcess]]:
    """The app processes a test started (stopped afterwards)."""
    started: list[AppProcess] = []
    yield started
    for app in started:
        app.stop()


def _read_until_audio_then_kill(app: AppProcess, prompt: str) -> list[dict[str, Any]]:
    """Ask ``prompt``; at the answer's first audio, SIGKILL the app. The events read until then."""
    decoder = SSEDecoder()
    events: list[dict[str, Any]] = []
    headers = {SESSION_HEADER: SESSION}
    with (
        httpx.Client(timeout=httpx.Timeout(10.0, read=GUARD_S)) as client,
        client.stream("POST", f"{app.url}/invocations", json={"prompt": prompt}, headers=headers) as response,
    ):
        try:
            for data in response.iter_raw():
                for event in decoder.feed(data):
                    events.append(event.json())
                    if event.json()["type"] == "audio_chunk":
                        app.kill()
                        return events
        except httpx.HTTPError:
            pass
    return events


def test_the_app_killed_mid_answer_keeps_the_question_and_remembers_nothing_unheard(
    endpoint_server: Any, app_processes: list[AppProcess], tmp_path: Path
) -> None:
    store_dir = tmp_path / "store"
    log_path = tmp_path / "app.log"
    # An answer written over an hour (longer than the test may run): the kill always comes while the
    # model is still writing it, however slow the first audio is.
    slow = "scripted?first_sentence_s=0.2&total_s=3600&remember=1"
    app_processes.append(first := AppProcess(store_dir, endpoint_server.ws_url, slow, log_path))
    events = _read_until_audio_then_kill(first, QUESTION)
    assert first.proc.returncode == -signal.SIGKILL
    assert [e["type"] for e in events][-1] == "audio_chunk" and "agent_end" not in [e["type"] for e in events]
    assert stored(store_dir) == [("user", QUESTION)]  # the question; nothing of the answer
    quick = "scripted?first_sentence_s=0.1&total_s=0.3&remember=1&text=It will be sunny."
    app_processes.append(again := AppProcess(store_dir, endpoint_server.ws_url, quick, log_path))
    answer = text_of(ask(again.url, "And next week?", SESSION))
    assert answer == f"Earlier you asked: {QUESTION.rstrip('?')}. It will be sunny."
    assert stored(store_dir) == [
        ("user", QUESTION),
        ("assistant", NOTHING_HEARD),
        ("user", "And next week?"),
        ("assistant", answer),
    ]


def test_two_invocations_on_one_session_at_the_same_moment(tmp_path: Path) -> None:
    model = HoldingEcho()
    results: dict[str, list[dict[str, Any]]] = {}
    start = threading.Barrier(2, timeout=GUARD_S)
    with served_app(model, ConversationStore(directory=tmp_path)) as url:

        def invocation(prompt: str) -> None:
            start.wait()
            results[prompt] = ask(url, prompt, SESSION)

        threads = [threading.Thread(target=invocation, args=(p,)) for p in ("alpha", "beta")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(GUARD_S)
    assert sorted(results) == ["alpha", "beta"] and model.most_at_once == 1
    turns = stored(tmp_path)
    assert [role for role, _ in turns] == ["user", "assistant", "user", "assistant"]
    assert sorted(text for role, text in turns if role == "user") == ["alpha", "beta"]
    for question, answer in zip(turns[0::2], turns[1::2], strict=True):
        events = results[question[1]]
        assert "error" not in [e["type"] for e in events]
        heard = heard_of(events)
        # Spoken in full, or barged in on by the other: then remembered as what was heard, nothing more.
        assert answer[1] == (text_of(events) if heard is None else remembered_text(heard).strip())


class _RefusingFileSessionManager(FileSessionManager):
    """A file store that refuses every write while ``refusing`` is set (a read-only or full volume)."""

    def __init__(self, refusing: threading.Event, **kwargs: Any) -> None:
        self._refusing = refusing
        super().__init__(**kwargs)

    def _write_file(self, path: str, data: dict[str, Any]) -> None:
        if self._refusing.is_set():
            raise PermissionError(f"read-only store: {os.path.basename(path)}")
        super()._write_file(path, data)


class _RefusingStore(ConversationStore):
    refusing: threading.Event

    def session_manager(self, session_id: str) -> SessionManager | None:
        return _RefusingFileSessionManager(
            self.refusing, session_id=session_id, storage_dir=str(self.directory)
        )


@pytest.mark.parametrize("refuses_from", ["the start", "the second turn"])
def test_a_store_that_refuses_writes(
    refuses_from: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = _RefusingStore(directory=tmp_path)
    refusing = threading.Event()
    object.__setattr__(store, "refusing", refusing)
    caplog.set_level(logging.ERROR, logger="agentcore_app")
    with served_app(HoldingEcho(), store) as url:
        if refuses_from == "the start":
            refusing.set()
        first = ask(url, "one", SESSION)
        refusing.set()
        second = ask(url, "two", SESSION)
    for events in (first, second):  # spoken in full, no error to the caller
        kinds = [e["type"] for e in events]
        assert "audio_chunk" in kinds and "error" not in kinds and "interrupted" not in kinds
    assert text_of(second) == "Heard: one / two."  # the conversation went on in the app's memory
    assert any(f"code=<{STORE_WRITE_FAILED}>" in r.getMessage() for r in caplog.records)
    # What the store accepted, and nothing after: no half-written turn.
    expected = [] if refuses_from == "the start" else [("user", "one"), ("assistant", "Heard: one.")]
    assert stored(tmp_path) == expected
