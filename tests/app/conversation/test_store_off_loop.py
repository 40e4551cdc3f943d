"""The conversation store is written off the server's loop: one session's stalled store write does not hold
up another session's answer, and the stalled session's turn is stored once the store answers.

Deterministic, no timing: session ``slow``'s first write blocks on an event that the test sets only after
session ``fast`` has spoken its whole answer. Were the write on the server's loop, ``fast`` would get
nothing until the write gave up (its guard), and the checks below would fail.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from agentcore_app.conversation._store import ConversationStore
from agentcore_app.conversation._store_writes import OffLoopSessionManager
from strands.session.file_session_manager import FileSessionManager
from strands.session.session_manager import SessionManager
from support.conversation_model import HoldingEcho
from support.conversation_store import GUARD_S, ask, served_app, text_of

pytestmark = pytest.mark.timeout(120)

SLOW = "slow-session-0123456789abcdef0123456789"
FAST = "fast-session-0123456789abcdef0123456789"
#: Seconds the stalled write waits at most (a hang guard: the old, on-loop writes fail the test, not hang it).
STALL_GUARD_S = 20.0


class _Stall:
    """Holds session ``SLOW``'s first message write until ``release`` is set."""

    def __init__(self) -> None:
        self.stalled = threading.Event()
        self.release = threading.Event()
        self.holding = False
        self.threads: list[str] = []

    def hold(self) -> None:
        if self.stalled.is_set():
            return
        self.threads.append(threading.current_thread().name)
        self.holding = True
        self.stalled.set()
        self.release.wait(STALL_GUARD_S)
        self.holding = False


class _StallingFileStore(ConversationStore):
    """The file store, its ``SLOW`` session's first message write held by ``stall``."""

    stall: _Stall

    def session_manager(self, session_id: str) -> SessionManager | None:
        manager = super().session_manager(session_id)
        if session_id != SLOW or not isinstance(manager, FileSessionManager):
            return manager
        stall = self.stall
        create_message = manager.create_message

        def held_create_message(*args: Any, **kwargs: Any) -> None:
            stall.hold()
            create_message(*args, **kwargs)

        manager.create_message = held_create_message  # type: ignore[method-assign]
        return manager


def test_a_stalled_store_write_does_not_delay_another_sessions_answer(tmp_path: Path) -> None:
    store = _StallingFileStore(directory=tmp_path)
    stall = _Stall()
    object.__setattr__(store, "stall", stall)
    with served_app(HoldingEcho(), store) as url:
        slow: list[dict[str, Any]] = []
        reader = threading.Thread(target=lambda: slow.extend(ask(url, "slow question", SLOW)))
        reader.start()
        assert stall.stalled.wait(GUARD_S)  # session slow's question is being written, and the write hangs
        held_at_first_audio: list[bool] = []

        def on_event(event: dict[str, Any]) -> None:
            if event["type"] == "audio_chunk" and not held_at_first_audio:
                held_at_first_audio.append(stall.holding)

        fast = ask(url, "fast question", FAST, on_event=on_event)
        assert held_at_first_audio == [True]  # fast's first audio came while slow's write still hung
        assert text_of(fast) == "Heard: fast question."
        assert stall.holding and reader.is_alive() and not slow  # slow waits for its own write
        stall.release.set()
        reader.join(GUARD_S)
    assert text_of(slow) == "Heard: slow question."
    assert stall.threads == [f"conversation-store-{SLOW[:24]}"]  # the conversation's writer thread
    again = ConversationStore(directory=tmp_path).session_manager(SLOW)
    assert isinstance(again, FileSessionManager)
    stored = [m.to_message()["content"][0]["text"].strip() for m in again.list_messages(SLOW, "default")]
    assert stored == ["slow question", "Heard: slow question."]


def test_writes_run_in_order_and_a_cancelled_answer_does_not_drop_its_write(tmp_path: Path) -> None:
    manager = OffLoopSessionManager(FileSessionManager(session_id=SLOW, storage_dir=str(tmp_path)))
    gate = threading.Event()
    ran: list[str] = []

    async def scenario() -> None:
        first = asyncio.create_task(manager.written(lambda: (gate.wait(GUARD_S), ran.append("first"))))
        second = asyncio.create_task(manager.written(lambda: ran.append("second")))
        await asyncio.sleep(0)  # both queued; the first holds the writer
        second.cancel()  # the answer that owed the second write is cancelled while it waits
        with pytest.raises(asyncio.CancelledError):
            await second
        assert manager.busy and ran == []
        gate.set()
        await first
        await manager.flushed()

    asyncio.run(scenario())
    assert ran == ["first", "second"] and not manager.busy
