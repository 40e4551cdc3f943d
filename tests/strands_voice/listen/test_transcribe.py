"""``TranscribeRecognizer``: the REAL Transcribe SDK and awscrt HTTP/2 client against a local fake service.

hypercorn serves :func:`fake_transcribe_streaming.create_transcribe_app` over TLS (h2 via ALPN) with a
throwaway certificate the CRT client trusts through ``SSL_CERT_FILE``; the fake checks every event's
SigV4 signature and answers with texts derived from the audio it received (never the network).
"""

from __future__ import annotations

import asyncio
import math
import re
import struct
from collections.abc import Coroutine, Iterator
from typing import Any

import pytest
from optional_groups import require
from strands_voice_protocol.errors import ConfigurationError, RecognitionError
from support.fake_sagemaker_runtime import DUMMY_SECRET, TLSFiles, serve_tls
from support.fake_transcribe_streaming import TranscribeStats, create_transcribe_app, final_texts
from support.listen import Heard, LoudnessVad

from strands_voice.listen import (
    Listener,
    ListenEvent,
    RecognitionFailed,
    SpeechStarted,
    TranscribeRecognizer,
    Transcript,
    TurnEnded,
)
from strands_voice.listen._recognizer import RecognitionStream
from strands_voice.listen._transcribe import TranscriptSegments

FRAME_BYTES = 1024  # the listener's 32 ms VAD frame at 16 kHz
CHUNK_BYTES = 3200  # 100 ms at 16 kHz, the recognizer's default chunk


def run[T](coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


def tone(frames: int) -> bytes:
    """``frames`` VAD frames of a 440 Hz tone, PCM16 mono at 16 kHz."""
    samples = frames * FRAME_BYTES // 2
    return struct.pack(
        f"<{samples}h", *(int(12000 * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(samples))
    )


@pytest.fixture
def trusted(tls_files: TLSFiles, monkeypatch: pytest.MonkeyPatch) -> TLSFiles:
    require("aws_sdk_transcribe_streaming", "listen")
    monkeypatch.setenv("SSL_CERT_FILE", tls_files.ca_file)  # read by the CRT TLS context
    return tls_files


def _serve(tls: TLSFiles, **behaviour: Any) -> Iterator[tuple[str, TranscribeStats]]:
    stats = TranscribeStats()
    app = create_transcribe_app(secret_key=DUMMY_SECRET, stats=stats, **behaviour)
    with serve_tls(app, tls.cert_file, tls.key_file) as port:
        yield f"https://localhost:{port}", stats


@pytest.fixture
def transcribe(trusted: TLSFiles, aws_env: None) -> Iterator[tuple[str, TranscribeStats]]:
    """The fake service answering with texts derived from the audio."""
    yield from _serve(trusted)


@pytest.fixture
def refusing(trusted: TLSFiles, aws_env: None) -> Iterator[tuple[str, TranscribeStats]]:
    """The fake service answering the first audio event with a ``BadRequestException``."""
    yield from _serve(trusted, fail_with="BadRequestException")


async def _until_partial(stream: RecognitionStream, wanted: str, partials: list[str]) -> None:
    """Collect ``feed``'s partials (feeding no audio) until ``wanted`` has come out."""
    while wanted not in partials:
        partials += await stream.feed(b"")
        await asyncio.sleep(0.01)  # the reader task runs meanwhile; the outer timeout bounds the wait


def test_a_turn_streams_its_audio_in_order_with_partials_then_the_final_text(
    transcribe: tuple[str, TranscribeStats],
) -> None:
    url, stats = transcribe
    audio = tone(33)  # 33792 bytes: ten 100 ms chunks while fed, 1792 bytes at the end
    recognizer = TranscribeRecognizer(region="us-east-1", endpoint_uri=url)

    async def turn() -> tuple[list[str], str]:
        stream = await recognizer.open()
        partials: list[str] = []
        try:
            for start in range(0, len(audio), FRAME_BYTES):
                partials += await stream.feed(audio[start : start + FRAME_BYTES])
            await _until_partial(stream, f"heard {10 * CHUNK_BYTES} bytes", partials)
            final = await stream.finish()
        finally:
            await stream.aclose()
            await recognizer.aclose()
        return partials, final

    partials, final = run(turn())

    # Every partial result came out of feed(), once, in order: the fake's text after each audio event.
    assert partials == [f"heard {k * CHUNK_BYTES} bytes" for k in range(1, 11)]
    # The final results (two segments) make the final text; the partial they close is gone.
    assert final == " ".join(final_texts(audio))
    assert stats.chunks == [CHUNK_BYTES] * 10 + [len(audio) - 10 * CHUNK_BYTES]
    assert stats.input_ended and stats.bad_signatures == 0
    assert (stats.http_version, stats.path) == ("2", "/stream-transcription")
    assert stats.headers["x-amzn-transcribe-language-code"] == "en-US"
    assert stats.headers["x-amzn-transcribe-sample-rate"] == "16000"
    assert stats.headers["x-amzn-transcribe-media-encoding"] == "pcm"
    assert "/us-east-1/transcribe/aws4_request" in stats.headers["authorization"]


def test_two_turns_are_two_streams_on_one_recognizer(transcribe: tuple[str, TranscribeStats]) -> None:
    url, stats = transcribe
    first, second = tone(4), tone(7)[::-1]
    recognizer = TranscribeRecognizer(region="us-east-1", endpoint_uri=url, language_code="ja-JP")

    async def turns() -> list[str]:
        finals = []
        try:
            for audio in (first, second):
                stream = await recognizer.open()
                await stream.feed(audio)
                await stream.pause()  # nothing special for a streaming engine
                await stream.resume()
                finals.append(await stream.finish())
                await stream.aclose()
                await stream.aclose()  # idempotent
        finally:
            await recognizer.aclose()
        return finals

    assert run(turns()) == [" ".join(final_texts(first)), " ".join(final_texts(second))]
    assert stats.headers["x-amzn-transcribe-language-code"] == "ja-JP"
    assert stats.streams == 2 and stats.chunks == [3200, 896, 3200, 3200, 768]


def test_an_error_event_from_the_service_is_a_coded_error(refusing: tuple[str, TranscribeStats]) -> None:
    url, stats = refusing
    audio = tone(20)
    recognizer = TranscribeRecognizer(region="us-east-1", endpoint_uri=url)

    async def turn() -> None:
        stream = await recognizer.open()
        try:
            for start in range(0, len(audio), FRAME_BYTES):
                await stream.feed(audio[start : start + FRAME_BYTES])
            await stream.finish()
        finally:
            await stream.aclose()
            await recognizer.aclose()

    with pytest.raises(RecognitionError) as caught:
        run(turn())
    error = caught.value
    assert (error.code, error.service_code, error.retryable) == (
        "invalid_request",
        "BadRequestException",
        False,
    )
    assert "The sample rate is not supported." in error.message
    assert stats.chunks[0] == CHUNK_BYTES


def listen_through_transcribe(url: str, audio: bytes) -> list[ListenEvent]:
    """Every event of a listener on Transcribe at ``url`` fed ``audio`` in microphone frames."""

    async def listen() -> list[ListenEvent]:
        recognizer = TranscribeRecognizer(region="us-east-1", endpoint_uri=url)
        try:
            heard = Heard(Listener(vad=LoudnessVad(), recognizer=recognizer))
            await heard.feed(audio)
            return await heard.close()
        finally:
            await recognizer.aclose()

    return run(listen())


def test_the_listener_turns_a_turn_into_a_final_transcript_through_transcribe(
    transcribe: tuple[str, TranscribeStats],
) -> None:
    url, stats = transcribe
    quiet, speech = bytes(16000), tone(31)  # 0.5 s of silence, about 1 s of "voice"
    audio = quiet + speech + quiet + quiet
    events = listen_through_transcribe(url, audio)
    kinds = [type(event) for event in events]
    assert kinds[0] is SpeechStarted and kinds[-1] is Transcript and kinds.count(TurnEnded) == 1
    partials = [e.text for e in events if isinstance(e, Transcript) and not e.final]
    assert all(re.fullmatch(r"heard \d+ bytes", text) for text in partials), partials
    final = events[-1]
    assert isinstance(final, Transcript) and final.final
    # The stream got the whole turn in order (its pre-roll, the voice, the silence that ended it).
    assert final.text == " ".join(final_texts(stats.audio))
    assert len(speech) < len(stats.audio) < len(audio) and stats.audio in audio


def test_a_turn_the_service_refuses_is_a_coded_failure_and_the_listener_goes_on(
    refusing: tuple[str, TranscribeStats],
) -> None:
    url, _stats = refusing
    quiet = bytes(16000)
    events = listen_through_transcribe(url, quiet + tone(31) + quiet + quiet)
    failures = [event for event in events if isinstance(event, RecognitionFailed)]
    assert [(f.code, f.retryable) for f in failures] == [("invalid_request", False)]
    assert "The sample rate is not supported." in failures[0].message
    assert isinstance(events[0], SpeechStarted)
    assert not any(isinstance(event, Transcript) and event.final for event in events)


async def one_turn(recognizer: TranscribeRecognizer) -> str:
    """A short turn on a new stream (``open`` returns at once: the service's answer is the reader's to
    await); the stream and the recognizer are closed after."""
    stream = await recognizer.open()
    try:
        await stream.feed(tone(4))
        return await stream.finish()
    finally:
        await stream.aclose()
        await recognizer.aclose()


@pytest.mark.parametrize(
    ("status", "error_type", "code", "retryable"),
    [
        (403, "AccessDeniedException", "connection_failed", False),
        (429, "LimitExceededException", "busy", True),
        (400, "BadRequestException", "invalid_request", False),
    ],
)
def test_a_refused_stream_is_a_coded_error(
    trusted: TLSFiles, aws_env: None, status: int, error_type: str, code: str, retryable: bool
) -> None:
    recognizer_error = None
    for url, _stats in _serve(trusted, refuse=(status, error_type)):
        with pytest.raises(RecognitionError) as caught:
            run(one_turn(TranscribeRecognizer(region="us-east-1", endpoint_uri=url)))
        recognizer_error = caught.value
    assert recognizer_error is not None
    assert (recognizer_error.code, recognizer_error.retryable) == (code, retryable)
    assert recognizer_error.service_code == error_type
    assert error_type in recognizer_error.message


def test_a_service_that_never_answers_is_a_connect_timeout(trusted: TLSFiles, aws_env: None) -> None:
    for url, stats in _serve(trusted, silent=True):
        with pytest.raises(RecognitionError) as caught:
            run(one_turn(TranscribeRecognizer(region="us-east-1", endpoint_uri=url, connect_timeout_s=0.5)))
        assert stats.path == "/stream-transcription"
        assert (caught.value.code, caught.value.retryable) == ("connect_timeout", True)


def test_no_region_or_no_credentials_is_a_coded_error_before_any_call(no_aws: None) -> None:
    require("aws_sdk_transcribe_streaming", "listen")
    with pytest.raises(RecognitionError, match="region") as no_region:
        run(TranscribeRecognizer().warm_up())
    with pytest.raises(RecognitionError, match="credentials") as no_credentials:
        run(TranscribeRecognizer(region="eu-west-1").warm_up())
    assert no_region.value.code == no_credentials.value.code == "connection_failed"


def test_settings_out_of_range_are_refused() -> None:
    with pytest.raises(ConfigurationError):
        TranscribeRecognizer(sample_rate=4000)
    with pytest.raises(ConfigurationError):
        TranscribeRecognizer(chunk_ms=5)


def test_segments_revise_partials_and_keep_final_results_in_order() -> None:
    segments = TranscriptSegments()
    assert segments.add("a", "what is", partial=True)
    assert segments.add("a", "what is the", partial=True)
    assert not segments.add("a", "what is the", partial=True)  # no change, no partial
    assert segments.add("a", "What is the weather?", partial=False)
    assert segments.add("b", "in", partial=True)
    assert segments.text() == "What is the weather? in"
    assert segments.add("b", "In Paris.", partial=False)
    assert segments.text() == "What is the weather? In Paris."
