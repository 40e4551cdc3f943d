"""The live conversation's status line: listening, thinking, speaking while the speakers play, and the
transcripts as they come."""

from __future__ import annotations

import asyncio
import io

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiBargeInEvent,
    BidiResponseStartEvent,
    BidiResponseStopEvent,
    BidiTranscriptBlockEvent,
)
from strands_voice_tools.talk.status import StatusLine


class FakeSpeakers:
    queued_s = 0.0


def _audio() -> BidiAudioDeltaEvent:
    return BidiAudioDeltaEvent(audio="AAAA", format="pcm", sample_rate=24000, channels=1, content_id="a")


async def _conversation(speakers: FakeSpeakers, out: io.StringIO, shown: list[str]) -> None:
    status = StatusLine(speakers, out=out, show=shown.append)
    await status.start()
    await status(BidiTranscriptBlockEvent("What does it cost?", "user", "u1"))
    await status(BidiResponseStartEvent("r1"))
    await status(_audio())
    speakers.queued_s = 3.0  # the answer was sent; the speakers still play it
    await status(BidiResponseStopEvent("r1"))
    await status(BidiTranscriptBlockEvent("It costs ten dollars.", "assistant", "r1-text-0"))
    await asyncio.sleep(0.3)
    assert status.state == "speaking"
    speakers.queued_s = 0.0
    await asyncio.sleep(0.3)
    assert status.state == "listening"
    await status(BidiResponseStartEvent("r2"))
    await status(_audio())
    await status(BidiBargeInEvent())
    await status.stop()


def test_the_status_follows_the_answer_until_the_speakers_fall_silent() -> None:
    out, shown = io.StringIO(), []
    asyncio.run(_conversation(FakeSpeakers(), out, shown))
    assert shown == ["you: What does it cost?", "agent: It costs ten dollars."]
    assert out.getvalue().splitlines() == [
        "status: listening",
        "status: thinking",
        "status: speaking",
        "status: listening",
        "status: thinking",
        "status: speaking",
        "status: listening",
    ]
