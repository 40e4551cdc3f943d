"""End to end: the real Kokoro endpoint (ONNX) and the real example app on loopback, driven through the page
in headless Chromium.

``strands_voice_tools.demo.start_demo_stack`` starts both servers exactly as ``strands-voice demo --serve``
does.
The LLM is the scripted stand-in (a real Strands model streaming a fixed answer with sleeps) with a short
answer, so synthesis stays quick on a shared CPU; everything after the model is real: chunker, Leg 2
session, synthesis, encoding, SSE, the page's reader and Web Audio scheduling.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.browser import PageSession, open_page

pytestmark = pytest.mark.browser

#: Two short sentences (the first long enough to be sent on its own): about 4 s of speech.
ANSWER = "Sure, here is the short version of the answer. You hear it while it streams."


@pytest.fixture(scope="module")
def demo_stack(onnx_engine: Any) -> Iterator[Any]:
    """The endpoint and the app, as ``strands-voice demo --serve`` starts them, on 127.0.0.1."""
    from agentcore_app.scripted import ScriptedModel
    from strands_voice_tools.demo import start_demo_stack

    # The text takes 3 s, so Stop (clicked at the first audio) always lands while the answer is streaming.
    model = ScriptedModel(text=ANSWER, first_sentence_s=0.4, total_s=3.0)
    stack = start_demo_stack("scripted", engine=onnx_engine, model=model)
    try:
        yield stack
    finally:
        stack.stop()


def test_browser_real_stack_speaks_measures_and_stops(page_session: PageSession, demo_stack: Any) -> None:
    page = page_session.page
    open_page(page_session, demo_stack.app_url + "/")
    assert page.title().startswith("strands-voice")
    page.fill("#prompt", "How does a voice agent start speaking early?")

    # 1. A whole answer, bidi, pcm16: text streams, audio chunks are scheduled, TTFA is shown.
    page.click("#speak")
    page.wait_for_function("() => window.voiceStats.chunksScheduled >= 1", timeout=90_000)
    assert page.text_content("#ttfa") not in ("", "–")
    stats = page_session.wait_for_state("done", "error", timeout_s=120)
    assert stats["state"] == "done", stats["errors"]
    assert stats["errors"] == []
    assert stats["format"] == "pcm16"
    assert page.text_content("#answer") == ANSWER
    assert stats["chunksScheduled"] == stats["chunksReceived"] >= 3
    # Everything the agent sent was scheduled, and back to back unless the stream ran dry (an underrun).
    assert stats["audioEndSeconds"] == pytest.approx(stats["audioSecondsScheduled"], abs=2e-3)
    assert stats["audioSecondsScheduled"] > 2.0
    if stats["underruns"] == 0:
        span = stats["lastEndAt"] - stats["firstStartAt"]
        assert span == pytest.approx(stats["audioSecondsScheduled"], abs=1e-3)
    assert 0 < stats["ttfaMs"] < 60_000
    assert stats["agentTtfaMs"] is not None and stats["agentTtfaMs"] <= stats["ttfaMs"]
    assert page.text_content("#agent-ttfa") not in ("", "–")
    sentences = page.locator("#timeline g.sentence").count()
    assert sentences == stats["sentences"] >= 2
    assert page.locator("#timeline rect.bar.text").count() == sentences
    assert page.locator("#timeline rect.bar.audio").count() == sentences
    shot = page_session.screenshot("real-stack")
    assert shot.stat().st_size > 10_000

    # 2. Stop while the answer is still streaming: the request is aborted and playback silenced at once.
    page.click("#speak")
    page.wait_for_function("() => window.voiceStats.chunksScheduled >= 1", timeout=90_000)
    assert page_session.stats()["activeSources"] >= 1  # something is playing
    page.click("#stop")
    stopped = page_session.wait_for_state("stopped", timeout_s=30)
    assert stopped["activeSources"] == 0
    assert stopped["stopped"] == 1
    assert stopped["audioEndSeconds"] is None  # it was cut off before the agent finished
    time.sleep(1.5)
    after = page_session.stats()
    assert (after["chunksReceived"], after["chunksScheduled"]) == (
        stopped["chunksReceived"],
        stopped["chunksScheduled"],
    )
    assert after["activeSources"] == 0
    assert page.is_disabled("#stop")

    # 3. The stack still answers after the barge-in, here in batch mode as Ogg Opus.
    page.select_option("#mode", "batch")
    page.select_option("#format", "opus")
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=120)
    assert stats["state"] == "done", stats["errors"]
    assert stats["format"] == "opus"
    assert stats["chunksScheduled"] >= 1
    assert stats["audioSecondsScheduled"] == pytest.approx(stats["audioEndSeconds"], abs=0.15)
    assert page.text_content("#answer") == ANSWER

    assert page_session.console_errors == []


def test_browser_real_stack_shows_errors_and_keeps_text(page_session: PageSession, demo_stack: Any) -> None:
    page = page_session.page
    open_page(page_session, demo_stack.app_url + "/")

    # Bad input: the app refuses the payload with 400 and a message the page shows.
    page.fill("#voice", "not a voice")
    page.click("#speak")
    stats = page_session.wait_for_state("error", timeout_s=30)
    assert "The agent refused the request" in page.text_content("#error")
    assert "'voice'" in page.text_content("#error")
    assert page.text_content("#answer") == ""

    # Speech fails (the endpoint has no such voice): the error is shown and the whole text is kept.
    page.fill("#voice", "zz_nobody")
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=120)
    assert stats["errors"], "an unknown voice must surface as an error"
    assert page.is_visible("#error")
    assert page.text_content("#answer") == ANSWER
    assert stats["chunksScheduled"] == 0
    # Only the browser's own network line for the 400 above; nothing from the page itself.
    assert page_session.page_errors == []
    assert all("400" in text for text in page_session.console_errors)
