"""What the phone plays of an answer (sans-I/O): 20 ms media, a mark after each sentence's audio, ``clear``
on a pause (the rest sent again from the pause's position on resume, its marks with it) and on a barge-in,
and the marks Twilio returns for cleared audio told from the ones it returns for played audio."""

from __future__ import annotations

from agentcore_app.call._phone_playback import FRAME_BYTES, PhonePlayback


class Wire:
    """Frames as readable strings: ``media:<first byte>x<length>``, ``mark:<name>``, ``clear``."""

    def media(self, payload: bytes) -> str:
        return f"media:{payload[0]}x{len(payload)}"

    def mark(self, name: str) -> str:
        return f"mark:{name}"

    def clear(self) -> str:
        return "clear"


def test_audio_goes_out_in_20_ms_frames_with_a_mark_after_each_sentence() -> None:
    playback = PhonePlayback(Wire())
    assert playback.event({"type": "agent_start", "request_id": "r"}) == []
    assert playback.audio(bytes([1]) * 400) == ["media:1x160", "media:1x160", "media:1x80"]
    assert playback.event({"type": "sentence_complete", "sentence": 0, "text": "One."}) == ["mark:r.0.0"]
    assert playback.audio(bytes([2]) * 160) == ["media:2x160"]
    assert playback.event({"type": "sentence_complete", "sentence": 1, "text": "Two."}) == ["mark:r.1.0"]
    assert playback.event({"type": "text_delta", "text": "x"}) == []
    assert playback.played("r.0.0") == ("r", 0) and playback.played("r.1.0") == ("r", 1)
    assert playback.confirmed == {"r": [0, 1]}
    assert playback.played("r.1.0") is None and playback.played("unknown") is None  # once, and only its own


def test_a_pause_clears_the_phone_and_the_resume_plays_on_from_where_it_stopped() -> None:
    playback = PhonePlayback(Wire())
    playback.event({"type": "agent_start", "request_id": "r"})
    playback.audio(bytes([1]) * 8 * 500)  # 500 ms of sentence 0
    playback.event({"type": "sentence_complete", "sentence": 0, "text": "One."})
    playback.audio(bytes([2]) * 8 * 200)  # 200 ms of sentence 1
    assert playback.event({"type": "speech_paused", "request_id": "r", "heard_ms": 300.0}) == ["clear"]
    assert playback.audio(bytes([3]) * 8 * 100) == []  # nothing while paused
    assert playback.event({"type": "sentence_complete", "sentence": 1, "text": "Two."}) == []
    assert playback.played("r.0.0") is None  # Twilio returns the cleared mark: it confirms nothing
    resumed = playback.event({"type": "speech_resumed", "request_id": "r", "heard_ms": 300.0})
    # From 300 ms on: the rest of sentence 0 (200 ms), its mark, sentence 1 (300 ms), its mark.
    assert resumed[:2] == ["media:1x160", "media:1x160"] and resumed[10] == "mark:r.0.1"
    assert sum(int(f.split("x")[1]) for f in resumed if f.startswith("media")) == 8 * 500
    assert resumed[-1] == "mark:r.1.1" and "media:3x160" in resumed
    assert playback.played("r.0.1") and playback.confirmed == {"r": [0]}


def test_a_pause_past_a_confirmed_mark_sends_that_mark_no_more() -> None:
    playback = PhonePlayback(Wire())
    playback.event({"type": "agent_start", "request_id": "r"})
    playback.audio(bytes([1]) * 160)
    playback.event({"type": "sentence_complete", "sentence": 0, "text": "One."})
    playback.audio(bytes([2]) * 320)
    assert playback.played("r.0.0")
    playback.event({"type": "speech_paused", "request_id": "r", "heard_ms": 25.0})
    assert playback.event({"type": "speech_resumed", "request_id": "r", "heard_ms": 25.0}) == [
        "media:2x160",
        "media:2x120",
    ]


def test_a_barge_in_clears_the_phone_and_forgets_the_answer() -> None:
    playback = PhonePlayback(Wire())
    playback.event({"type": "agent_start", "request_id": "r"})
    playback.audio(bytes([1]) * 320)
    playback.event({"type": "sentence_complete", "sentence": 0, "text": "One."})
    assert playback.event({"type": "interrupted", "heard_text": ""}) == ["clear"]
    assert playback.played("r.0.0") is None and playback.answer is None
    assert playback.event({"type": "speech_resumed", "heard_ms": 0.0}) == []  # nothing to resume
    playback.event({"type": "agent_start", "request_id": "s"})
    assert playback.audio(bytes([4]) * FRAME_BYTES) == ["media:4x160"]
    assert playback.event({"type": "sentence_complete", "sentence": 0, "text": "A."}) == ["mark:s.0.1"]
