"""The browser page in headless Chromium against the replay app (a realistic Leg 3 stream, real audio).

These check the page's own behaviour in detail and fast: the SSE reader, gapless pcm16 scheduling, the
compressed formats, Stop, and visible errors. The real endpoint and app are driven in
``test_browser_real_stack.py``.
"""

from __future__ import annotations

import time

import pytest
from support.browser import REPLAY_SENTENCES, PageSession, ReplayServer, open_page

pytestmark = pytest.mark.browser

FULL_TEXT = "".join(sentence + " " for sentence in REPLAY_SENTENCES)


def test_browser_sse_parser_buffers_until_blank_line(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    open_page(page_session, replay_server.url)
    result = page_session.page.evaluate(
        """() => {
          const enc = new TextEncoder();
          const whole = enc.encode(
            'data: {"type":"text_delta","text":"h\u00e9llo \u263a"}\\n\\n' +
            ': keep-alive comment\\r\\n\\r\\n' +
            'event: custom\\r\\nid: 7\\r\\ndata: line one\\r\\ndata: line two\\r\\n\\r\\n' +
            'data: {"type":"agent_end"}');
          // Split at every byte: mid-character, between CR and LF, inside "data:".
          const parser = new window.voicePage.SSEParser();
          const events = [];
          for (let i = 0; i < whole.length; i++) events.push(...parser.feed(whole.subarray(i, i + 1)));
          const beforeFlush = events.length;
          events.push(...parser.flush());
          return { beforeFlush, events };
        }"""
    )
    assert result["beforeFlush"] == 2
    assert result["events"] == [
        {"event": "message", "id": None, "data": '{"type":"text_delta","text":"héllo ☺"}'},
        {"event": "custom", "id": "7", "data": "line one\nline two"},
        {"event": "message", "id": None, "data": '{"type":"agent_end"}'},
    ]


@pytest.mark.parametrize("mode", ["bidi", "batch"])
def test_browser_page_streams_text_and_plays_pcm16_gaplessly(
    page_session: PageSession, replay_server: ReplayServer, mode: str
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.select_option("#mode", mode)
    page.fill("#voice", "jm_kumo")
    page.fill("#speed", "1.1")
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=30)

    prompt = page.input_value("#prompt")
    assert replay_server.record.payloads == [
        {
            "prompt": prompt,
            "mode": mode,
            "format": "pcm16",
            "voice": "jm_kumo",
            "speed": 1.1,
            "timestamps": True,
        }
    ]
    assert stats["state"] == "done", stats["errors"]
    assert stats["errors"] == []
    assert page.text_content("#answer") == FULL_TEXT
    assert stats["audioEndSeconds"] == pytest.approx(stats["audioSecondsScheduled"], abs=1e-3)
    # Every chunk scheduled, back to back: the scheduled span equals the audio's length (no gaps).
    assert stats["chunksScheduled"] == stats["chunksReceived"] > len(REPLAY_SENTENCES)
    expected_seconds = replay_server.record.audio_seconds[0]
    assert stats["audioSecondsScheduled"] == pytest.approx(expected_seconds, abs=1e-3)
    assert stats["underruns"] == 0
    scheduled_span = stats["lastEndAt"] - stats["firstStartAt"]
    assert scheduled_span == pytest.approx(stats["audioSecondsScheduled"], abs=1e-3)
    assert stats["activeSources"] == 0  # everything played out
    assert stats["ttfaMs"] is not None and 0 < stats["ttfaMs"] < 10_000
    assert page.text_content("#ttfa") not in ("", "–")
    assert page.text_content("#agent-ttfa") == "123 ms"
    # The timeline: one group per sentence, each with a text bar and an audio bar.
    assert page.locator("#timeline g.sentence").count() == len(REPLAY_SENTENCES)
    assert page.locator("#timeline rect.bar.text").count() == len(REPLAY_SENTENCES)
    assert page.locator("#timeline rect.bar.audio").count() == len(REPLAY_SENTENCES)
    sentences = page.evaluate(
        "() => [...window.voicePage.run.sentences.values()].map(s => [s.textStart, s.textEnd, s.audioFirst])"
    )
    for text_start, text_end, audio_first in sentences:
        assert text_start is not None and text_start <= text_end <= audio_first
    if mode == "batch":
        # Batch speaks only once the whole text is in.
        assert min(audio for _, _, audio in sentences) >= max(end for _, end, _ in sentences)
    else:
        # Bidi speaks the first sentence before the last text arrives.
        assert sentences[0][2] < sentences[-1][1]
    assert page_session.console_errors == []
    page_session.screenshot(f"replay-{mode}")


@pytest.mark.parametrize("audio_format", ["opus", "mp3", "wav", "aac"])
def test_browser_page_plays_encoded_formats(
    page_session: PageSession, replay_server: ReplayServer, audio_format: str
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.select_option("#format", audio_format)
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=30)

    assert replay_server.record.payloads[0]["format"] == audio_format
    assert stats["state"] == "done", stats["errors"]
    assert stats["errors"] == []
    assert stats["format"] == audio_format
    assert stats["chunksScheduled"] > len(REPLAY_SENTENCES)
    # Decoded length matches what was sent (codec priming/padding may add a little).
    expected_seconds = replay_server.record.audio_seconds[0]
    assert expected_seconds - 0.01 <= stats["audioSecondsScheduled"] <= expected_seconds + 0.15
    assert stats["lastEndAt"] - stats["firstStartAt"] >= stats["audioSecondsScheduled"] - 1e-3
    assert page_session.console_errors == []


def test_browser_stop_aborts_the_request_and_silences_playback(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.fill("#prompt", "A slow answer, please.")
    page.click("#speak")
    page.wait_for_function("() => window.voiceStats.chunksScheduled >= 2", timeout=60_000)
    assert page.is_enabled("#stop")
    page.click("#stop")
    stopped = page_session.wait_for_state("stopped", timeout_s=30)
    assert stopped["activeSources"] == 0
    assert stopped["stopped"] == 1
    # The server saw the caller hang up (the real app cancels synthesis on that).
    deadline = time.monotonic() + 30  # a hang guard; the disconnect is seen at once
    while replay_server.record.disconnected == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert replay_server.record.disconnected == 1
    assert replay_server.record.completed == 0
    # Stop also asked the app to interrupt that answer of this page's session.
    while not replay_server.record.interrupt_actions and time.monotonic() < deadline:
        time.sleep(0.05)
    assert replay_server.record.interrupt_actions == [{"action": "interrupt", "request_id": "replay-1"}]
    time.sleep(0.8)  # nothing more arrives or plays after Stop
    after = page_session.stats()
    assert after["chunksReceived"] == stopped["chunksReceived"]
    assert after["chunksScheduled"] == stopped["chunksScheduled"]
    assert after["activeSources"] == 0
    assert page.is_disabled("#stop")
    assert page.text_content("#status") == "Stopped."
    assert page_session.console_errors == []


def test_browser_speech_error_is_shown_and_text_kept(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.fill("#prompt", "Make the speech-fails part happen.")
    page.click("#speak")
    stats = page_session.wait_for_state("done", "error", timeout_s=30)

    assert [error["code"] for error in stats["errors"]] == ["tts_unavailable"]
    assert page.is_visible("#error")
    assert "the TTS endpoint is unreachable" in page.text_content("#error")
    assert page.text_content("#answer") == FULL_TEXT  # all the text, although speech stopped
    assert stats["state"] == "done"
    assert "problems" in page.text_content("#status")
    assert page_session.console_errors == []


def test_browser_bad_input_is_shown(page_session: PageSession, replay_server: ReplayServer) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    page.fill("#prompt", "   ")
    page.click("#speak")
    assert page_session.wait_for_state("error")["requests"] == 0
    assert "Type a prompt first." in page.text_content("#error")
    assert replay_server.record.payloads == []

    page.fill("#prompt", "Hello")
    page.fill("#voice", "not a voice")
    page.click("#speak")
    stats = page_session.wait_for_state("error")
    assert stats["requests"] == 1
    assert "The agent refused the request: 'voice' must be a voice id." in page.text_content("#error")
    assert "Type a prompt first." not in page.text_content("#error")  # old errors are cleared
    # Only the browser's own network log line for the 400, nothing from the page.
    assert all("400" in text for text in page_session.console_errors)


def test_browser_unreachable_agent_is_shown(page_session: PageSession, replay_server: ReplayServer) -> None:
    page = page_session.page
    open_page(page_session, replay_server.url)
    replay_server.server.stop()
    page.click("#speak")
    stats = page_session.wait_for_state("error", timeout_s=15)
    assert stats["errors"][0]["code"] == "request_failed"
    assert "Cannot reach the agent" in page.text_content("#error")
    assert page.is_disabled("#stop")
    assert page.is_enabled("#speak")
    assert page_session.page_errors == []


def test_browser_timeline_finds_cleaned_sentences_in_the_raw_text(
    page_session: PageSession, replay_server: ReplayServer
) -> None:
    """The chunker's sentences (Markdown and symbols cleaned for speech) map back onto the streamed text."""
    from agentcore_app.scripted import SCRIPTED_ANSWER, split_tokens
    from strands_voice_protocol.chunker import IncrementalSentenceChunker

    chunker = IncrementalSentenceChunker()
    sentences = [chunk for token in split_tokens(SCRIPTED_ANSWER) for chunk in chunker.feed(token)]
    sentences += chunker.finish()
    assert len(sentences) >= 5
    open_page(page_session, replay_server.url)
    spans = page_session.page.evaluate(
        """([raw, sentences]) => {
          let from = 0;
          return sentences.map(s => {
            const span = window.voicePage.locateSentence(raw, s, from);
            if (span) from = span.end;
            return span;
          });
        }""",
        [SCRIPTED_ANSWER, sentences],
    )
    assert all(span is not None for span in spans), list(zip(sentences, spans, strict=True))
    ends = [0] + [span["end"] for span in spans]
    assert all(span["start"] >= end for span, end in zip(spans, ends, strict=False))  # in order, no overlap
    # Spans run from the first to the last letter or digit of each sentence.
    assert spans[-1]["end"] == len(SCRIPTED_ANSWER.rstrip().rstrip("."))
