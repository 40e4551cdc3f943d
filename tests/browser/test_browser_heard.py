"""The page in Chromium without a microphone call: a stopped turn shows what was HEARD (played), not all the
text that arrived; Talk without a microphone says so clearly and typing still works; the layout leads with
the conversation and the "Highlight words" checkbox sits beside its label at 1280 px (the replay app)."""

from __future__ import annotations

from support.browser import REPLAY_SENTENCES, PageSession, ReplayServer, open_page

#: Stop once the first sentence has played and the second has played this long (ms), well before it ends.
INTO_SECOND_MS = 250


def test_a_stopped_turn_shows_the_heard_text_not_the_text_received(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.fill("#prompt", "A slow answer, please.")  # "slow": the replay plays at real time
    page.click("#speak")
    page.wait_for_function(
        """ms => {
          const run = window.voicePage.run;
          const second = run && run.sentences.get(1);
          return Boolean(second && second.playStart !== null && run.now() - second.playStart >= ms);
        }""",
        arg=INTO_SECOND_MS,
        timeout=60_000,
    )
    page.click("#stop")
    page_session.wait_for_state("stopped", timeout_s=30)
    shown = page.text_content("#turns li:last-child .agent") or ""
    received = page.evaluate("() => window.voicePage.run.text.trim()")
    assert page.get_attribute("#turns li:last-child", "data-state") == "stopped"
    # The first sentence was heard in full; of the second only the words played (word timings on).
    assert shown.startswith(REPLAY_SENTENCES[0])
    assert REPLAY_SENTENCES[1] not in shown
    assert received.startswith(REPLAY_SENTENCES[0] + " " + REPLAY_SENTENCES[1])
    assert len(shown) < len(received)
    assert page_session.console_errors == []


def test_talk_without_a_microphone_says_so_and_typing_still_works(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page  # Chromium without a fake device or permission: no microphone to open
    open_page(page_session, replay_server.url)
    page.click("#talk")
    page_session.wait_for_state("error", timeout_s=30)
    error = page.text_content("#error") or ""
    assert "microphone" in error.lower() and "type instead" in error.lower()
    assert page.text_content("#talk") == "Talk"
    assert page.text_content("#status") == "No call: type instead."
    page.fill("#prompt", "Hello")
    page.click("#speak")
    done = page_session.wait_for_state("done", timeout_s=60)
    assert done["chunksScheduled"] > 0 and replay_server.record.completed == 1


def test_the_conversation_leads_and_the_checkbox_sits_by_its_label(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    page.set_viewport_size({"width": 1280, "height": 900})
    open_page(page_session, replay_server.url)
    conversation = page.locator("section.conversation").bounding_box()
    settings = page.locator("#settings").bounding_box()
    measurements = page.locator("#measurements").bounding_box()
    assert conversation and settings and measurements
    assert conversation["y"] < settings["y"] < measurements["y"]
    for control in ("#talk", "#speak", "#stop", "#prompt"):
        box = page.locator(control).bounding_box()
        assert box and box["y"] + box["height"] <= 900, control  # at hand without scrolling
    assert page.get_attribute("#measurements", "open") is None  # folded away
    box = page.locator("#timestamps").bounding_box()
    words = page.locator("label[for='timestamps']").bounding_box()
    assert box and words
    assert box["width"] <= 24  # a checkbox, not a stretched input
    assert box["x"] - words["x"] <= 4  # the box starts the label, its words right after it
    page_session.screenshot("page-1280")
