"""SageMakerTransport driven through the REAL SDK client, with SageMaker played in-process.

The stand-in (:class:`InProcessSageMaker`) is handed to the SDK as its duplex HTTP client: it decodes the
signed event stream the SDK writes, checks every event signature, and answers like SageMaker.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from collections.abc import Coroutine
from typing import Any

import pytest
from strands_voice_protocol.errors import (
    MissingDependencyError,
    SageMakerStreamError,
    TTSConnectionError,
    TTSTimeoutError,
)
from support.fake_sagemaker_runtime import FakeStream, InProcessSageMaker, encode_exception

from strands_voice.transports._base import FrameTransport
from strands_voice.transports.sagemaker import SageMakerTransport

SYNTH = json.dumps({"type": "synthesize", "text": "Hello there.", "request_id": "r1"})
START = json.dumps(
    {"type": "synthesis_start", "request_id": "r1", "format": "pcm16", "sample_rate": 24000, "channels": 1}
)
COMPLETE = json.dumps(
    {
        "type": "synthesis_complete",
        "request_id": "r1",
        "audio_bytes": 8,
        "total_duration_s": 0.1,
        "elapsed_s": 0.1,
    }
)
# Raw PCM that happens to start with '{' and even parses as JSON: must stay audio when marked BINARY.
PCM_LIKE_JSON = b'{"a": 1}'
PCM_BRACE = b"{\x00\x01\x02\xff\xfe"


def run[T](coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


def make(fake: InProcessSageMaker, **options: Any) -> SageMakerTransport:
    return SageMakerTransport("kokoro-tts", region="us-east-1", http_client=fake, **options)


async def drain(transport: SageMakerTransport) -> list[str | bytes]:
    frames: list[str | bytes] = []
    while True:
        try:
            frames.append(await transport.receive())
        except EOFError:
            return frames


def test_sagemaker_transport_is_a_frame_transport() -> None:
    assert isinstance(SageMakerTransport("kokoro-tts"), FrameTransport)


def test_sagemaker_request_is_signed_and_routed(aws_env: None) -> None:
    fake = InProcessSageMaker()

    async def scenario() -> None:
        transport = make(fake, target_variant="blue")
        await transport.connect()
        assert transport.invoked_variant == "AllTraffic"
        await transport.close()

    run(scenario())
    (request,) = fake.requests
    assert request.method == "POST"
    assert request.destination.host == "runtime.sagemaker.us-east-1.amazonaws.com"
    assert request.destination.port == 8443
    assert request.destination.path == "/endpoints/kokoro-tts/invocations-bidirectional-stream"
    headers = {f.name.lower(): ",".join(f.values) for f in request.fields}
    assert headers["content-type"] == "application/vnd.amazon.eventstream"
    assert headers["x-amzn-sagemaker-target-variant"] == "blue"
    assert headers["x-amz-content-sha256"] == "STREAMING-AWS4-HMAC-SHA256-EVENTS"
    reader = fake.readers[0]
    assert (reader.access_key, reader.region, reader.service) == (
        "AKIDSTRANDSVOICETEST",
        "us-east-1",
        "sagemaker",
    )
    # close() ended our direction with the signed end frame.
    assert fake.streams[0].input_ended.is_set()
    assert fake.closed


def test_sagemaker_one_utf8_payload_part_per_message_in_order(aws_env: None) -> None:
    fake = InProcessSageMaker()
    messages = [
        json.dumps({"type": "synthesize", "text": f"Sentence {i}.", "request_id": f"r{i}"}) for i in range(8)
    ]

    async def scenario() -> list[str | bytes]:
        transport = make(fake)
        await transport.connect()
        # Sent concurrently: the signature chain and the order must still hold.
        await asyncio.gather(*(transport.send(m) for m in messages))
        echoed = [await transport.receive() for _ in messages]
        await transport.close()
        return echoed

    echoed = run(scenario())
    received = fake.streams[0].received
    assert [p.data.decode() for p in received] == [e for e in echoed]
    assert sorted(p.data.decode() for p in received) == sorted(messages)
    assert all(p.data_type == "UTF8" and p.completion_state == "COMPLETE" for p in received)
    assert all(p.signature_ok for p in received), "an event signature did not verify"


def test_sagemaker_signature_check_can_fail(aws_env: None) -> None:
    # The stand-in verifies with a different secret: the check must notice.
    fake = InProcessSageMaker(secret_key="not-the-secret")

    async def scenario() -> None:
        transport = make(fake)
        await transport.connect()
        await transport.send(SYNTH)
        await transport.receive()
        await transport.close()

    run(scenario())
    assert [p.signature_ok for p in fake.streams[0].received] == [False]


def test_sagemaker_frames_told_apart_by_data_type(aws_env: None) -> None:
    async def behaviour(stream: FakeStream) -> None:
        await stream.next_part()
        await stream.reply(START.encode(), "UTF8")
        await stream.reply(PCM_LIKE_JSON, "BINARY")  # JSON-looking audio, marked BINARY: audio
        await stream.reply(PCM_BRACE, "BINARY")
        await stream.reply(PCM_BRACE)  # no data type, not whole JSON: audio
        await stream.reply(
            b'{"type": "error", "code": "busy", "message": "x"}'
        )  # no data type, JSON: control
        await stream.reply(COMPLETE.encode(), "UTF8")
        await stream.end()

    async def scenario() -> list[str | bytes]:
        transport = make(InProcessSageMaker(behaviour))
        await transport.connect()
        await transport.send(SYNTH)
        frames = await drain(transport)
        await transport.close()
        return frames

    frames = run(scenario())
    assert frames == [
        START,
        PCM_LIKE_JSON,
        PCM_BRACE,
        PCM_BRACE,
        '{"type": "error", "code": "busy", "message": "x"}',
        COMPLETE,
    ]
    assert [type(f) for f in frames] == [str, bytes, bytes, bytes, str, str]


def test_sagemaker_partial_parts_are_joined(aws_env: None) -> None:
    async def behaviour(stream: FakeStream) -> None:
        await stream.next_part()
        await stream.reply(START.encode()[:10], "UTF8", "PARTIAL")
        await stream.reply(START.encode()[10:], "UTF8", "COMPLETE")
        await stream.reply(b"\x01\x02", "BINARY", "PARTIAL")
        await stream.reply(b"\x03\x04", "BINARY", "PARTIAL")
        await stream.reply(b"\x05", "BINARY", "COMPLETE")
        await stream.end()

    async def scenario() -> list[str | bytes]:
        transport = make(InProcessSageMaker(behaviour))
        await transport.connect()
        await transport.send(SYNTH)
        frames = await drain(transport)
        await transport.close()
        return frames

    assert run(scenario()) == [START, b"\x01\x02\x03\x04\x05"]


@pytest.mark.parametrize(
    ("kind", "error_code", "expected_code"),
    [
        ("ModelStreamError", "ModelStreamError.ContainerClosed", "ModelStreamError.ContainerClosed"),
        ("ModelStreamError", None, "ModelStreamError"),
        ("InternalStreamFailure", None, "InternalStreamFailure"),
    ],  # expected: SageMaker's own code; the agent-side code is connection_lost (retryable) for all
)
def test_sagemaker_stream_errors_are_typed(
    aws_env: None, kind: str, error_code: str | None, expected_code: str
) -> None:
    async def behaviour(stream: FakeStream) -> None:
        await stream.next_part()
        await stream.reply(START.encode(), "UTF8")
        await stream.reply_raw(encode_exception(kind, "arn:aws:sagemaker:secret-detail", error_code))
        await stream.end()

    async def scenario() -> tuple[list[str | bytes], SageMakerStreamError, BaseException]:
        transport = make(InProcessSageMaker(behaviour))
        await transport.connect()
        await transport.send(SYNTH)
        frames = [await transport.receive()]
        with pytest.raises(SageMakerStreamError) as info:
            await transport.receive()
        # The stream is over: receiving again raises the same error, sending is refused.
        with pytest.raises(SageMakerStreamError):
            await transport.receive()
        with pytest.raises(TTSConnectionError) as send_info:
            await transport.send(SYNTH)
        await transport.close()
        return frames, info.value, send_info.value

    frames, error, send_error = run(scenario())
    assert frames == [START]
    assert error.sagemaker_code == expected_code
    assert error.code == "connection_lost" and error.retryable  # the session resumes it like a drop
    assert error.error_type == kind
    assert isinstance(error, TTSConnectionError)
    assert "arn:aws" not in error.message and "arn:aws" in error.sagemaker_message
    assert send_error.code == "connection_lost"


@pytest.mark.parametrize(
    ("status", "error_type", "body", "expected_code", "code"),
    [
        (
            424,
            "ModelError",
            {"Message": "upgrade refused", "OriginalStatusCode": 404, "ErrorCode": "ModelError.WS"},
            "ModelError.WS",
            "connection_failed",
        ),
        (
            424,
            "ModelError",
            {"Message": "at capacity", "OriginalStatusCode": 503, "ErrorCode": "ModelError.WS"},
            "ModelError.WS",
            "busy",
        ),
        (
            400,
            "ValidationError",
            {"Message": "Endpoint kokoro-tts not found."},
            "ValidationError",
            "connection_failed",
        ),
        (503, "ServiceUnavailableError", {"Message": "try later"}, "ServiceUnavailableError", "busy"),
        (400, "ThrottlingException", {"Message": "slow down"}, "ThrottlingException", "busy"),
        (429, "TooManyRequestsException", {"Message": "slow down"}, "TooManyRequestsException", "busy"),
        (
            403,
            "AccessDeniedException",
            {"Message": "not authorized"},
            "AccessDeniedException",
            "connection_failed",
        ),
    ],
)
def test_sagemaker_refused_stream_raises_at_connect(
    aws_env: None, status: int, error_type: str, body: dict[str, Any], expected_code: str, code: str
) -> None:
    fake = InProcessSageMaker(status=status, error_type=error_type, error_body=body)

    async def scenario() -> SageMakerStreamError:
        transport = make(fake)
        with pytest.raises(SageMakerStreamError) as info:
            await transport.connect()
        await transport.close()
        return info.value

    error = run(scenario())
    assert error.sagemaker_code == expected_code
    assert error.code == code and error.retryable == (code == "busy")  # throttling retried, refusals not
    assert error.error_type == (error_type if status != 424 else "ModelError")
    assert body["Message"] not in error.message
    assert fake.closed


def test_sagemaker_connect_timeout(aws_env: None) -> None:
    fake = InProcessSageMaker(respond=False)
    # Time the wait, not the one-off imports of the SDK and botocore.
    importlib.import_module("botocore.session")
    importlib.import_module("aws_sdk_sagemaker_runtime_http2.client")

    async def scenario() -> float:
        transport = make(fake, connect_timeout=0.5)
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(TTSTimeoutError) as info:
            await transport.connect()
        assert info.value.code == "connect_timeout"
        await transport.close()
        return loop.time() - started

    assert run(scenario()) < 3.0
    assert fake.closed


def test_sagemaker_silence_timeout(aws_env: None) -> None:
    async def silent(stream: FakeStream) -> None:
        await stream.next_part()
        await asyncio.Event().wait()

    async def scenario() -> None:
        transport = make(InProcessSageMaker(silent), silence_timeout=0.3, close_timeout=0.5)
        await transport.connect()
        await transport.send(SYNTH)
        with pytest.raises(TTSTimeoutError) as info:
            await transport.receive()
        assert info.value.code == "silence_timeout"
        await transport.close()

    run(scenario())


def test_sagemaker_receive_is_cancellation_safe(aws_env: None) -> None:
    async def slow(stream: FakeStream) -> None:
        await stream.next_part()
        await asyncio.sleep(0.3)
        await stream.reply(START.encode(), "UTF8")
        await stream.end()

    async def scenario() -> list[str | bytes]:
        transport = make(InProcessSageMaker(slow))
        await transport.connect()
        await transport.send(SYNTH)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.05):
                await transport.receive()
        frames = await drain(transport)
        await transport.close()
        return frames

    assert run(scenario()) == [START]


def test_sagemaker_close_is_clean_and_idempotent(aws_env: None) -> None:
    async def until_end(stream: FakeStream) -> None:
        while await stream.next_part() is not None:
            pass
        await stream.end()  # SageMaker ends its direction once ours has ended

    fake = InProcessSageMaker(until_end)

    async def scenario() -> None:
        transport = make(fake)
        await transport.connect()
        await transport.send(SYNTH)
        await transport.close()
        await transport.close()
        with pytest.raises(TTSConnectionError):
            await transport.send(SYNTH)
        with pytest.raises((TTSConnectionError, EOFError)):
            await transport.receive()
        current = asyncio.current_task()
        assert [t for t in asyncio.all_tasks() if t is not current] == []

    run(scenario())
    assert fake.streams[0].input_ended.is_set()
    assert fake.closed


def test_sagemaker_missing_credentials_fail_before_any_call(no_aws: None) -> None:
    fake = InProcessSageMaker()

    async def scenario() -> TTSConnectionError:
        transport = make(fake)
        with pytest.raises(TTSConnectionError) as info:
            await transport.connect()
        return info.value

    error = run(scenario())
    assert error.code == "connection_failed" and not error.retryable
    assert "AWS_ACCESS_KEY_ID" in error.message
    assert fake.requests == []


def test_sagemaker_missing_region_fails_before_any_call(
    no_aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDX")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    fake = InProcessSageMaker()

    async def scenario() -> TTSConnectionError:
        transport = SageMakerTransport("kokoro-tts", http_client=fake)
        with pytest.raises(TTSConnectionError) as info:
            await transport.connect()
        return info.value

    error = run(scenario())
    assert error.code == "connection_failed" and not error.retryable
    assert "?region=" in error.message
    assert fake.requests == []


def test_sagemaker_region_and_endpoint_from_environment(
    aws_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    fake = InProcessSageMaker()

    async def scenario() -> None:
        transport = SageMakerTransport("kokoro-tts", http_client=fake)
        await transport.connect()
        await transport.close()

    run(scenario())
    assert fake.requests[0].destination.host == "runtime.sagemaker.eu-west-1.amazonaws.com"
    assert fake.readers[0].region == "eu-west-1"

    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME_HTTP2", "https://vpce.example:9443")
    run(scenario())
    assert (fake.requests[1].destination.host, fake.requests[1].destination.port) == ("vpce.example", 9443)


def test_sagemaker_missing_sdk_says_what_to_install(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aws_sdk_sagemaker_runtime_http2", None)
    transport = SageMakerTransport("kokoro-tts", region="us-east-1")
    with pytest.raises(MissingDependencyError) as info:
        run(transport.connect())
    assert "pip install 'strands-voice[sagemaker]'" in str(info.value)
    assert isinstance(info.value, ImportError)
