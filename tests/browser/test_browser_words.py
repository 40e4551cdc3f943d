"""The page highlights each word of the answer as it is spoken (Leg 3 ``words`` events), in Chromium."""

from __future__ import annotations

import re

import pytest
from support.browser import REPLAY_SENTENCES, PageSession, ReplayServer, open_page

pytestmark = pytest.mark.browser

WORDS = [word for sentence in REPLAY_SENTENCES for word in re.findall(r"\S+", sentence)]

HIGHLIGHTED = """() => {
  const highlight = CSS.highlights.get("spoken-word");
  return highlight ? [...highlight].map((range) => range.toString()).join("|") : null;
}"""


def test_the_word_being_spoken_is_highlighted_in_order(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    assert page.is_checked("#timestamps")
    page.click("#speak")
    # A word of the second sentence is marked in the answer while its audio plays.
    page.wait_for_function(f"() => ({HIGHLIGHTED})() === 'finished'", timeout=30_000)
    stats = page_session.wait_for_state("done", "error", timeout_s=30)
    assert stats["state"] == "done", stats["errors"]
    assert replay_server.record.payloads[0]["timestamps"] is True
    assert stats["wordsReceived"] == len(WORDS)
    assert stats["wordsHighlighted"] == WORDS  # every word, once, in the order spoken
    # The highlight follows the audio clock: by the end nothing is marked any more.
    page.wait_for_function(f"() => ({HIGHLIGHTED})() === null", timeout=10_000)
    assert page_session.console_errors == []


def test_no_highlight_when_switched_off(page_session: PageSession, replay_server: ReplayServer) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.uncheck("#timestamps")
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=30)
    assert stats["state"] == "done", stats["errors"]
    assert "timestamps" not in replay_server.record.payloads[0]
    assert stats["wordsReceived"] == 0 and stats["wordsHighlighted"] == []
    assert page.evaluate(HIGHLIGHTED) is None
