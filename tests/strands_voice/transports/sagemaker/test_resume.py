"""Resume and retry over SageMaker: the TTS session over the REAL SDK client, SageMaker played in-process.

A stream that SageMaker ends with ``ModelStreamError`` (the container died or restarted mid-answer) is
resumed on a new stream; throttling at connect is retried; a refusal is not. The clock is fake, so the
backoff schedule is exact and no test waits on it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from typing import Any

import pytest
from strands_voice_protocol.errors import SageMakerStreamError
from support.clocks import FakeTime
from support.fake_sagemaker_runtime import FakeStream, InProcessSageMaker, encode_exception

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import (
    AudioChunk,
    RequestCompleted,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
)
from strands_voice.transports.sagemaker import SageMakerTransport


def run[T](coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


def start(rid: str) -> bytes:
    frame = {
        "type": "synthesis_start",
        "request_id": rid,
        "format": "pcm16",
        "sample_rate": 24000,
        "channels": 1,
    }
    return json.dumps(frame).encode()


def complete(rid: str, nbytes: int) -> bytes:
    frame = {
        "type": "synthesis_complete",
        "request_id": rid,
        "audio_bytes": nbytes,
        "total_duration_s": nbytes / 48000,
        "elapsed_s": 0.01,
    }
    return json.dumps(frame).encode()


async def next_message(stream: FakeStream) -> dict[str, Any]:
    part = await stream.next_part()
    assert part is not None and part.signature_ok
    message: dict[str, Any] = json.loads(part.data)
    return message


async def answer(stream: FakeStream, rid: str, audio: bytes) -> None:
    await stream.reply(start(rid), "UTF8")
    await stream.reply(audio, "BINARY")
    await stream.reply(complete(rid, len(audio)), "UTF8")


async def until_client_ends(stream: FakeStream) -> None:
    while await stream.next_part() is not None:
        pass
    await stream.end()


class ScriptedSageMaker(InProcessSageMaker):
    """Plays the n-th stream with ``behaviours[n]``; ``throttle_first`` answers the first call 429."""

    def __init__(self, behaviours: list[Any], *, throttle_first: bool = False) -> None:
        super().__init__(self._dispatch)
        self.behaviours = behaviours
        self.throttle_first = throttle_first
        self.calls = 0

    async def _dispatch(self, stream: FakeStream) -> None:
        await self.behaviours[len(self.streams) - 1](stream)

    async def send(self, request: Any, *, request_config: Any = None) -> Any:
        self.calls += 1
        if self.throttle_first and self.calls == 1:
            self.status, self.error_type = 400, "ThrottlingException"
            self.error_body = {"Message": "Rate exceeded"}
            try:
                return await super().send(request, request_config=request_config)
            finally:
                self.status = 200
        return await super().send(request, request_config=request_config)


def test_sagemaker_stream_error_mid_answer_is_resumed_on_a_new_stream(aws_env: None) -> None:
    async def dies(stream: FakeStream) -> None:
        r0 = (await next_message(stream))["request_id"]
        r1 = (await next_message(stream))["request_id"]
        await answer(stream, r0, b"\x01" * 64)
        await stream.reply(start(r1), "UTF8")
        await stream.reply(b"\x02" * 32, "BINARY")
        # What SageMaker says when the container behind the stream goes away.
        await stream.reply_raw(encode_exception("ModelStreamError", "container closed", "ModelStreamError"))
        await stream.end()

    async def serves(stream: FakeStream) -> None:
        again = await next_message(stream)
        await answer(stream, again["request_id"], b"\x02" * 32 + b"\x03" * 32)
        assert (await next_message(stream))["type"] == "close"
        await until_client_ends(stream)

    fake = ScriptedSageMaker([dies, serves])
    clock = FakeTime()

    async def scenario() -> tuple[list[str], list[SessionEvent], int]:
        transport = SageMakerTransport("kokoro-tts", region="us-east-1", http_client=fake)
        async with TTSSession(transport, silence_timeout=10, retry=clock.policy()) as session:
            rids = [await session.synthesize("Zero."), await session.synthesize("One.")]
            await session.finish()
            events = [event async for event in session]
            return rids, events, session.reconnects

    (r0, r1), events, reconnects = run(scenario())
    assert reconnects == 1 and len(fake.streams) == 2
    assert events == [
        RequestStarted(r0, "pcm16", 24000, 1),
        AudioChunk(r0, b"\x01" * 64),
        RequestCompleted(r0, 64, 64 / 48000, 0.01),
        RequestStarted(r1, "pcm16", 24000, 1),
        AudioChunk(r1, b"\x02" * 32),
        RequestRestarted(r1, 32),
        RequestStarted(r1, "pcm16", 24000, 1),
        AudioChunk(r1, b"\x02" * 32 + b"\x03" * 32),
        RequestCompleted(r1, 64, 64 / 48000, 0.01),
    ]
    # The completed request never went out again; the cut one did, whole, under a fresh wire id.
    second = [json.loads(p.data) for p in fake.streams[1].received]
    assert [m.get("request_id") for m in second] == [f"{r1}~1", None]
    assert all(p.signature_ok for s in fake.streams for p in s.received)
    assert clock.sleeps == [0.25 * 0.75]


def test_sagemaker_throttling_at_connect_is_retried(aws_env: None) -> None:
    async def serves(stream: FakeStream) -> None:
        message = await next_message(stream)
        await answer(stream, message["request_id"], b"\x04" * 16)
        await until_client_ends(stream)

    fake = ScriptedSageMaker([serves], throttle_first=True)
    clock = FakeTime()

    async def scenario() -> list[SessionEvent]:
        transport = SageMakerTransport("kokoro-tts", region="us-east-1", http_client=fake)
        async with TTSSession(transport, silence_timeout=10, retry=clock.policy()) as session:
            await session.synthesize("Hello.")
            await session.finish()
            return [event async for event in session]

    events = run(scenario())
    assert isinstance(events[-1], RequestCompleted)
    assert fake.calls == 2 and clock.sleeps == [0.25 * 0.75]


def test_sagemaker_refusal_at_connect_is_not_retried(aws_env: None) -> None:
    fake = InProcessSageMaker(
        status=400, error_type="ValidationError", error_body={"Message": "no such endpoint"}
    )
    clock = FakeTime()

    async def scenario() -> SageMakerStreamError:
        transport = SageMakerTransport("kokoro-tts", region="us-east-1", http_client=fake)
        with pytest.raises(SageMakerStreamError) as caught:
            await TTSSession(transport, retry=clock.policy()).open()
        await transport.close()
        return caught.value

    error = run(scenario())
    assert error.code == "connection_failed" and not error.retryable
    assert len(fake.requests) == 1 and clock.sleeps == []
