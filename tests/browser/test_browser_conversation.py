"""The page is a conversation, in headless Chromium against the REAL example app (a stand-in LLM that
echoes the questions it remembers, an in-memory TTS endpoint): turns listed, Stop barges in and stops the
agent, a new question while the agent speaks interrupts it, one session id for the page's life, and
"New conversation" starts another."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from agentcore_app.conversation._store import ConversationStore
from support.browser import PageSession, open_page
from support.conversation_model import HOLD, HoldingEcho
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.browser

SECOND = "hold again, this second question is long enough to be spoken"
WAIT_MS = 60_000  # hang guard of every wait


@pytest.fixture
def conversation_app() -> Iterator[tuple[str, Any, HoldingEcho]]:
    """The example app (no store: memory only) on a free port: its URL, the app and the model."""
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    model = HoldingEcho()
    app = create_app(
        tts_url="ws://127.0.0.1:9",
        model=model,
        conversation_store=ConversationStore(kind="none"),
        transport_factory=InstantTTS,
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield server.base_url + "/", app, model


def turns(page: Any) -> list[dict[str, str]]:
    result: list[dict[str, str]] = page.evaluate(
        "() => window.voiceConversation.turns.map(({ prompt, answer, state }) => ({ prompt, answer, state }))"
    )
    return result


def wait_turn(page: Any, index: int, *states: str) -> None:
    page.wait_for_function(
        "([i, states]) => states.includes(window.voiceConversation.turns[i]?.state)",
        arg=[index, list(states)],
        timeout=WAIT_MS,
    )


def ask_and_wait_for_audio(page: Any, prompt: str) -> None:
    page.fill("#prompt", prompt)
    page.click("#speak")  # resets the page's stats: the wait below is for this answer's audio
    page.wait_for_function("() => window.voiceStats.chunksReceived >= 1", timeout=WAIT_MS)


def test_browser_conversation_stop_interrupting_question_and_new_conversation(
    page_session: PageSession, conversation_app: tuple[str, Any, HoldingEcho]
) -> None:
    url, app, model = conversation_app
    page = page_session.page
    open_page(page_session, url)
    session_id = page.text_content("#session-id")
    assert session_id and len(session_id) == 36

    # Stop: the app barges in on the answer, the agent stops writing, the turn is marked.
    ask_and_wait_for_audio(page, HOLD)
    page.click("#stop")
    wait_turn(page, 0, "stopped")
    page.wait_for_function("() => !window.voicePage.run || window.voicePage.run.finished", timeout=WAIT_MS)
    conversation = app.state.conversations._live[session_id]

    # A new question while the agent speaks interrupts it; the answer after it remembers every question.
    ask_and_wait_for_audio(page, SECOND)
    page.fill("#prompt", "next")
    page.click("#speak")
    wait_turn(page, 2, "done")
    listed = turns(page)
    assert [t["prompt"] for t in listed] == [HOLD, SECOND, "next"]
    assert [t["state"] for t in listed] == ["stopped", "stopped", "done"]
    assert listed[2]["answer"] == f"Heard: {HOLD} / {SECOND} / next."
    assert page.locator("#turns li").count() == 3
    assert page.text_content("#turns li:nth-child(3) .agent") == listed[2]["answer"]
    assert page.text_content("#session-id") == session_id  # one session for the page's life

    # The agent never wrote the held answers' tails (cancelled), and remembers what was heard of them:
    # at most the start of what it wrote.
    assert not model.tail_written and model.most_at_once == 1
    messages = conversation.agent.messages
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3
    for index in (1, 3):
        (block,) = messages[index]["content"]
        assert "la la la" not in block["text"] and model.TAIL not in block["text"]

    # A new conversation: a new session id, an empty list, an agent that remembers nothing.
    page.click("#new-conversation")
    assert page.locator("#turns li").count() == 0
    assert page.text_content("#session-id") not in ("", session_id)
    page.fill("#prompt", "fresh question")
    page.click("#speak")
    wait_turn(page, 0, "done")
    assert turns(page)[0]["answer"] == "Heard: fresh question."
    assert page_session.console_errors == []
