"""Each turn's outcome goes out in turn order, whichever recognition ends first: its final transcript, or a
coded :class:`RecognitionFailed` when the recognizer failed on it (one turn lost; listening goes on)."""

from __future__ import annotations

import asyncio

from support.listen import Heard, HeldRecognizer, LoudnessVad, silence, tone

from strands_voice.listen import (
    Listener,
    ListenEvent,
    ListenSettings,
    RecognitionFailed,
    SpeechStarted,
    Transcript,
    TurnEnded,
)


def listener_on(recognizer: HeldRecognizer) -> Listener:
    return Listener(
        ListenSettings(end_silence_s=0.3, end_of_turn="silence"), vad=LoudnessVad(), recognizer=recognizer
    )


def outcomes(events: list[ListenEvent]) -> list[str]:
    """Each turn's outcome, in order: its final text, or the failure's code."""
    return [
        event.text if isinstance(event, Transcript) else event.code
        for event in events
        if isinstance(event, RecognitionFailed) or (isinstance(event, Transcript) and event.final)
    ]


def test_a_later_turn_recognized_first_still_comes_second() -> None:
    async def run() -> list[ListenEvent]:
        recognizer = HeldRecognizer()
        heard = Heard(listener_on(recognizer))
        await heard.feed(tone(0.6) + silence(0.5) + tone(0.6) + silence(0.5))
        first, second = recognizer.streams
        assert first.fed > 0 and second.fed > 0
        second.release.set()  # the later turn's text is ready first
        for _ in range(20):
            await asyncio.sleep(0)
        assert outcomes(heard.events) == []
        first.release.set()
        return await heard.close()

    events = asyncio.run(run())
    assert [type(event) for event in events].count(TurnEnded) == 2
    assert outcomes(events) == ["turn 1", "turn 2"]


def test_a_recognizer_that_fails_costs_one_turn_wherever_it_fails() -> None:
    recognizer = HeldRecognizer(failures=("open", "feed", "finish", ""))

    async def run() -> list[ListenEvent]:
        heard = Heard(listener_on(recognizer))
        await heard.feed((tone(1.5) + silence(0.5)) * 4, after_frame=recognizer.release_all)
        return await heard.close()

    events = asyncio.run(run())
    kinds = [type(event) for event in events]
    assert kinds.count(SpeechStarted) == 4
    assert kinds.count(TurnEnded) == 4  # the turn ends where the caller stopped, recognized or not
    assert outcomes(events) == ["connection_failed", "connection_lost", "internal", "turn 4"]
    broken = [event for event in events if isinstance(event, RecognitionFailed)]
    assert broken[0] == RecognitionFailed(
        "connection_failed", "No AWS credentials for Amazon Transcribe", retryable=False
    )
    assert broken[2].message == "the recognizer failed (ValueError)"
    assert all(stream.closed for stream in recognizer.streams)


def test_words_the_recognizer_does_not_trust_are_never_a_transcript_the_turn_is_asked_again() -> None:
    """A repetition loop ("five five" as twenty 5s) is reported as not recognized: nothing is answered,
    and the turn core asks the caller to say it again."""
    from strands_voice.listen._listener import UNTRUSTED

    recognizer = HeldRecognizer(failures=("invent", ""))

    async def run() -> list[ListenEvent]:
        heard = Heard(listener_on(recognizer))
        await heard.feed((tone(1.0) + silence(0.5)) * 2, after_frame=recognizer.release_all)
        return await heard.close()

    events = asyncio.run(run())
    assert outcomes(events) == ["internal", "turn 2"]
    failed = next(event for event in events if isinstance(event, RecognitionFailed))
    assert failed == RecognitionFailed("internal", UNTRUSTED, retryable=True)
    assert not any(isinstance(e, Transcript) and e.final and "5" in e.text for e in events)


def test_a_turn_that_fails_fast_still_comes_after_the_turn_before_it() -> None:
    async def run() -> list[ListenEvent]:
        recognizer = HeldRecognizer(failures=("", "open"))
        heard = Heard(listener_on(recognizer))
        await heard.feed(tone(0.6) + silence(0.5) + tone(0.6) + silence(0.5))
        for _ in range(20):
            await asyncio.sleep(0)
        assert outcomes(heard.events) == []  # the second turn failed; the first is still being recognized
        recognizer.streams[0].release.set()
        return await heard.close()

    assert outcomes(asyncio.run(run())) == ["turn 1", "connection_failed"]
