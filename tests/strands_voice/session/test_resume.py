"""Resume at a sample (Leg 1 ``skip_samples``) and the two stalls, against scripted endpoints.

The seam itself (``strands_voice.session._seam``) is pure and tested on its own; the session tests run a
scripted WebSocket endpoint that cuts the first connection mid-audio and answers the resumed request from
the sample asked for. The real endpoint killed and restarted: tests/reliability/test_reliability_resume.py
and tests/strands_voice/transports/sagemaker/test_resume_real.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strands_voice_protocol.errors import TTSConnectionError
from websockets.asyncio.server import ServerConnection, serve

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import (
    AudioChunk,
    RequestCompleted,
    RequestFailed,
    RequestRestarted,
    RequestStarted,
    SessionEvent,
    WordsReceived,
)
from strands_voice.session._retry import RetryPolicy
from strands_voice.session._seam import OVERLAP_SAMPLES, Seam, keep_tail
from strands_voice.transports._websocket import NON_TRANSIENT_CLOSE_CODES, WebSocketTransport

#: A request's audio: a tone, so a step or a misplaced sample shows.
SIGNAL = (8000 * np.sin(np.arange(9600) * 0.07)).astype("<i2")
CUT_SAMPLES = 2400  # delivered before the cut


def pcm(samples: np.ndarray[Any, Any]) -> bytes:
    return bytes(samples.astype("<i2").tobytes())


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


# ---- the seam, pure ---------------------------------------------------------------------------------


@given(st.lists(st.integers(1, 400), min_size=1, max_size=40), st.integers(0, 200))
def test_seam_of_a_bit_exact_engine_is_invisible_however_the_audio_is_split(
    sizes: list[int], cut_ms_tenths: int
) -> None:
    given_samples = cut_ms_tenths * 24  # 0 to 4800 samples already delivered
    delivered = pcm(SIGNAL[:given_samples])
    seam = Seam(len(delivered), keep_tail(b"", delivered))
    assert seam.skip_samples == max(0, given_samples - OVERLAP_SAMPLES)
    resent = pcm(SIGNAL[seam.skip_samples :])
    out, at = bytearray(), 0
    for size in sizes * 100:
        if at >= len(resent):
            break
        out += seam.feed(resent[at : at + 2 * size])
        at += 2 * size
    out += seam.feed(resent[at:])
    assert delivered + bytes(out) == pcm(SIGNAL)
    assert seam.joined


def test_seam_fades_a_step_between_two_runs_within_5_ms() -> None:
    delivered = pcm(SIGNAL[:CUT_SAMPLES])
    seam = Seam(len(delivered), keep_tail(b"", delivered))
    other_run = SIGNAL.astype(np.int32) + 900  # an engine that is not bit-exact across runs
    out = b"".join(seam.feed(piece) for piece in chunks(pcm(other_run[seam.skip_samples :]), 1000))
    joined = np.frombuffer(delivered + out, dtype="<i2").astype(np.int32)
    assert len(joined) == len(SIGNAL)
    # The first new sample continues the old run (no 900-step click) ...
    step = abs(joined[CUT_SAMPLES] - joined[CUT_SAMPLES - 1])
    assert step < abs(SIGNAL[CUT_SAMPLES] - SIGNAL[CUT_SAMPLES - 1]) + 900 / OVERLAP_SAMPLES + 8
    # ... and from 5 ms after the seam on, the new run plays unchanged.
    after = CUT_SAMPLES + OVERLAP_SAMPLES
    assert np.array_equal(joined[after:], other_run[after:])
    assert np.array_equal(joined[:CUT_SAMPLES], SIGNAL[:CUT_SAMPLES])


# ---- the session against a scripted endpoint ----------------------------------------------------------

Script = Callable[[ServerConnection, int], Awaitable[None]]


async def scripted(
    script: Script, body: Callable[[str], Awaitable[list[SessionEvent]]]
) -> list[SessionEvent]:
    connections = 0

    async def handle(ws: ServerConnection) -> None:
        nonlocal connections
        connections += 1
        await script(ws, connections)

    async with serve(handle, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        return await body(f"ws://127.0.0.1:{port}/invocations-bidirectional-stream")


def start(rid: str, **extra: Any) -> str:
    frame = {"type": "synthesis_start", "request_id": rid, "format": "pcm16", "sample_rate": 24000}
    return json.dumps({**frame, "channels": 1, **extra})


def complete(rid: str, nbytes: int) -> str:
    frame = {"type": "synthesis_complete", "request_id": rid, "audio_bytes": nbytes}
    return json.dumps({**frame, "total_duration_s": nbytes / 48000, "elapsed_s": 0.01})


def words(rid: str, *spans: tuple[str, float, int]) -> str:
    listed = [
        {"word": w, "start_s": s, "end_s": s + 0.1, "char_start": c, "char_end": c + len(w)}
        for w, s, c in spans
    ]
    return json.dumps({"type": "word_timestamps", "request_id": rid, "words": listed})


async def speak(url: str, text: str = "One. Two.", timestamps: bool | None = None) -> list[SessionEvent]:
    retry = RetryPolicy(deadline_s=20.0, initial_delay_s=0.01, max_delay_s=0.05)
    async with TTSSession(WebSocketTransport(url), silence_timeout=20.0, retry=retry) as session:
        await session.synthesize(text, timestamps=timestamps)
        await session.finish()
        return [event async for event in session]


def run(coro: Awaitable[list[SessionEvent]]) -> list[SessionEvent]:
    async def bounded() -> list[SessionEvent]:
        async with asyncio.timeout(30):
            return await coro

    return asyncio.run(bounded())


async def cut_then_resume(ws: ServerConnection, connection: int) -> None:
    """Connection 1: the first CUT_SAMPLES, then the TCP connection is gone. Connection 2: honours
    skip_samples (echoes it, sends the audio from that sample on, with the cut segment's words again)."""
    message = json.loads(await ws.recv())
    rid = message["request_id"]
    if connection == 1:
        await ws.send(start(rid))
        await ws.send(words(rid, ("One.", 0.0, 0)))
        for piece in chunks(pcm(SIGNAL[:CUT_SAMPLES]), 1200):
            await ws.send(piece)
        ws.transport.abort()
        return
    skip = message["skip_samples"]
    await ws.send(start(rid, skip_samples=skip))
    await ws.send(words(rid, ("One.", 0.0, 0)))  # the cut segment's words, sent again
    for piece in chunks(pcm(SIGNAL[skip : len(SIGNAL) // 2]), 1000):
        await ws.send(piece)
    await ws.send(words(rid, ("Two.", 0.2, 5)))
    for piece in chunks(pcm(SIGNAL[len(SIGNAL) // 2 :]), 1000):
        await ws.send(piece)
    await ws.send(complete(rid, 2 * (len(SIGNAL) - skip)))
    await ws.recv()  # close


def test_session_resumes_a_cut_request_at_the_sample_where_delivery_stopped() -> None:
    events = run(scripted(cut_then_resume, lambda url: speak(url, timestamps=True)))
    audio = b"".join(e.data for e in events if isinstance(e, AudioChunk))
    assert audio == pcm(SIGNAL)  # every sample once, in place: a naive player needs nothing
    assert [type(e) for e in events if not isinstance(e, AudioChunk)] == [
        RequestStarted,
        WordsReceived,
        WordsReceived,
        RequestCompleted,
    ]
    said = [w.word for e in events if isinstance(e, WordsReceived) for w in e.words]
    assert said == ["One.", "Two."]  # the cut segment's words are not given twice
    (done,) = [e for e in events if isinstance(e, RequestCompleted)]
    assert done.audio_bytes == len(audio) and done.duration_s == len(audio) / 48000


async def cut_then_replay_whole(ws: ServerConnection, connection: int) -> None:
    """An endpoint that predates skip_samples: no echo, the audio from sample 0 again."""
    message = json.loads(await ws.recv())
    rid = message["request_id"]
    await ws.send(start(rid))
    if connection == 1:
        await ws.send(pcm(SIGNAL[:CUT_SAMPLES]))
        ws.transport.abort()
        return
    await ws.send(pcm(SIGNAL))
    await ws.send(complete(rid, 2 * len(SIGNAL)))
    await ws.recv()


def test_session_falls_back_to_whole_replay_without_the_echo() -> None:
    events = run(scripted(cut_then_replay_whole, speak))
    kinds = [type(e) for e in events]
    assert kinds == [
        RequestStarted,
        AudioChunk,
        RequestRestarted,
        RequestStarted,
        AudioChunk,
        RequestCompleted,
    ]
    restarted = events[2]
    assert isinstance(restarted, RequestRestarted) and restarted.dropped_bytes == 2 * CUT_SAMPLES


async def refuse_one_frame(ws: ServerConnection, connection: int) -> None:
    """The second request is answered by an ``error`` without ``request_id`` (an unreadable frame), in
    its place in the order; the third is answered normally."""
    first = json.loads(await ws.recv())["request_id"]
    await ws.recv()
    third = json.loads(await ws.recv())["request_id"]
    await ws.send(start(first))
    await ws.send(pcm(SIGNAL[:480]))
    await ws.send(complete(first, 960))
    await ws.send(json.dumps({"type": "error", "code": "invalid_request", "message": "Too large."}))
    await ws.send(start(third))
    await ws.send(pcm(SIGNAL[:480]))
    await ws.send(complete(third, 960))
    await ws.recv()


def test_error_without_request_id_settles_the_earliest_unanswered_request_at_once() -> None:
    async def body(url: str) -> list[SessionEvent]:
        # A silence timeout far beyond the test's bound: the request must not wait for it.
        async with TTSSession(WebSocketTransport(url), silence_timeout=3600.0) as session:
            rids = [await session.synthesize(text) for text in ("One.", "Two.", "Three.")]
            await session.finish()
            events = [event async for event in session]
            assert [e.request_id for e in events if isinstance(e, RequestCompleted)] == [rids[0], rids[2]]
            (failed,) = [e for e in events if isinstance(e, RequestFailed)]
            assert failed.request_id == rids[1] and failed.code == "invalid_request"
            return events

    run(scripted(refuse_one_frame, body))


@pytest.mark.parametrize("code", sorted(NON_TRANSIENT_CLOSE_CODES))
def test_a_close_that_refuses_the_data_is_not_retried(code: int) -> None:
    connections: list[int] = []

    async def refuse(ws: ServerConnection, connection: int) -> None:
        connections.append(connection)
        await ws.recv()
        await ws.close(code=code, reason="refused")

    async def body(url: str) -> list[SessionEvent]:
        with pytest.raises(TTSConnectionError) as info:
            await speak(url)
        assert info.value.code == "connection_lost" and not info.value.retryable
        return []

    run(scripted(refuse, body))
    assert connections == [1]


def test_an_oversized_request_fails_at_once_on_the_real_endpoint(endpoint_server: Any) -> None:
    """The real endpoint answers a frame over its size limit with an ``error`` that names no request."""

    async def body() -> list[SessionEvent]:
        async with TTSSession(WebSocketTransport(endpoint_server.ws_url), silence_timeout=3600.0) as session:
            rids = [await session.synthesize(text) for text in ("Hello.", "word " * 14_000, "Bye.")]
            await session.finish()
            events = [event async for event in session]
            assert [e.request_id for e in events if isinstance(e, RequestCompleted)] == [rids[0], rids[2]]
            (failed,) = [e for e in events if isinstance(e, RequestFailed)]
            assert failed.request_id == rids[1] and failed.code == "invalid_request"
            return events

    async def bounded() -> list[SessionEvent]:
        async with asyncio.timeout(240):
            return await body()

    asyncio.run(bounded())
