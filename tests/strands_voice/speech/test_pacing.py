"""The one pacing rule (an answer's audio at most a lead ahead of the caller's playback), on a fake clock:
the playback count advances only when the helper sleeps, so each wait it asks for is read, not timed."""

from __future__ import annotations

import asyncio

import pytest

from strands_voice.speech import within_lead


class FakePlayback:
    """``sent_s`` of audio sent; the caller plays it while the helper sleeps (not while ``paused``)."""

    def __init__(self, sent_s: float, *, paused_for: int = 0) -> None:
        self.sent_s = sent_s
        self.played_s = 0.0
        self.paused_for = paused_for  # this many sleeps play nothing (the caller paused the answer)
        self.sleeps: list[float] = []
        self.cut_after: int | None = None

    def unplayed_s(self) -> float | None:
        if self.cut_after is not None and len(self.sleeps) >= self.cut_after:
            return None
        return self.sent_s - self.played_s

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.paused_for:
            self.paused_for -= 1
        else:
            self.played_s += seconds


def pace(playback: FakePlayback, *, lead_s: float, poll_s: float) -> None:
    asyncio.run(within_lead(playback.unplayed_s, lead_s=lead_s, poll_s=poll_s, sleep=playback.sleep))


def test_within_the_lead_it_returns_at_once() -> None:
    playback = FakePlayback(sent_s=0.4)
    pace(playback, lead_s=0.5, poll_s=0.05)
    assert playback.sleeps == []


def test_ahead_of_the_lead_it_waits_in_polls_until_the_excess_is_played() -> None:
    playback = FakePlayback(sent_s=0.65)
    pace(playback, lead_s=0.5, poll_s=0.05)
    assert playback.sleeps == pytest.approx([0.05, 0.05, 0.05])
    assert playback.sent_s - playback.played_s == pytest.approx(0.5)


def test_the_last_wait_is_only_the_excess_left() -> None:
    playback = FakePlayback(sent_s=0.13)
    pace(playback, lead_s=0.1, poll_s=0.02)
    assert playback.sleeps == pytest.approx([0.02, 0.01])


def test_a_paused_playback_holds_it_back_until_it_plays_again() -> None:
    playback = FakePlayback(sent_s=0.15, paused_for=4)
    pace(playback, lead_s=0.1, poll_s=0.02)
    assert playback.sleeps == pytest.approx([0.02] * 4 + [0.02, 0.02, 0.01])
    assert playback.played_s == pytest.approx(0.05)


def test_nothing_to_wait_for_ends_the_wait() -> None:
    playback = FakePlayback(sent_s=5.0)
    playback.cut_after = 2  # the answer is cut (or its playback no longer counted) after two polls
    pace(playback, lead_s=0.1, poll_s=0.02)
    assert playback.sleeps == pytest.approx([0.02, 0.02])
    playback = FakePlayback(sent_s=5.0)
    playback.cut_after = 0
    pace(playback, lead_s=0.1, poll_s=0.02)
    assert playback.sleeps == []
