"""The REAL awscrt HTTP/2 client against a local TLS HTTP/2 server playing SageMaker.

hypercorn serves :func:`create_forwarding_app` over TLS (h2 via ALPN) with a throwaway certificate that
the CRT client trusts through ``SSL_CERT_FILE``. The app forwards each PayloadPart to the REAL Kokoro
endpoint's WebSocket route as one frame and returns the container's frames as PayloadParts, as
SageMaker does in front of a bidirectional endpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from strands_voice_protocol.errors import (
    AGENT_ERROR_CODES,
    TRANSPORT_ERROR_CODES,
    SageMakerStreamError,
    TTSConnectionError,
    TTSError,
)
from strands_voice_protocol.wire import BIDI_PATH
from support.fake_sagemaker_runtime import DUMMY_SECRET, TLSFiles, create_forwarding_app, serve_tls
from websockets.asyncio.server import ServerConnection, serve

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import AudioChunk, RequestCompleted, RequestRestarted, RequestStarted
from strands_voice.session._retry import NO_RETRY
from strands_voice.transports._base import FrameTransport
from strands_voice.transports._websocket import WebSocketTransport
from strands_voice.transports.sagemaker import SageMakerTransport

SENTENCES = ["Hello from SageMaker.", "This is the second sentence."]


def run[T](coro: Coroutine[Any, Any, T], timeout: float = 120.0) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


@dataclass
class FakeSageMaker:
    port: int
    stats: dict[str, Any]

    def url(self, **query: str) -> str:
        extra = "".join(f"&{k}={v}" for k, v in query.items())
        return f"sagemaker://kokoro-tts?region=us-east-1&endpoint_url=https://localhost:{self.port}{extra}"


@pytest.fixture
def trusted(tls_files: TLSFiles, monkeypatch: pytest.MonkeyPatch) -> TLSFiles:
    # Read by the CRT TLS context when a client is created.
    monkeypatch.setenv("SSL_CERT_FILE", tls_files.ca_file)
    return tls_files


def _serve(ws_url: str, tls: TLSFiles) -> Iterator[FakeSageMaker]:
    stats: dict[str, Any] = {}
    app = create_forwarding_app(ws_url, secret_key=DUMMY_SECRET, stats=stats)
    with serve_tls(app, tls.cert_file, tls.key_file) as port:
        yield FakeSageMaker(port, stats)


@pytest.fixture
def sagemaker_front(endpoint_server: Any, trusted: TLSFiles, aws_env: None) -> Iterator[FakeSageMaker]:
    """Fake SageMaker (TLS, HTTP/2) in front of the real Kokoro endpoint."""
    yield from _serve(endpoint_server.ws_url, trusted)


async def _speak(url: str, sentences: list[str]) -> tuple[list[Any], SageMakerTransport]:
    transport = SageMakerTransport.from_url(url)
    events: list[Any] = []
    async with TTSSession(transport, silence_timeout=60.0) as session:
        for text in sentences:
            await session.synthesize(text)
        await session.finish()
        async for event in session:
            events.append(event)
    return events, transport


def test_sagemaker_http2_session_against_real_endpoint(sagemaker_front: FakeSageMaker) -> None:
    events, transport = run(_speak(sagemaker_front.url(variant="AllTraffic"), SENTENCES))

    stats = sagemaker_front.stats
    assert stats["http_version"] == "2"
    assert stats["endpoint_name"] == "kokoro-tts"
    assert stats["target_variant"] == "AllTraffic"
    assert stats["bad_signatures"] == 0
    sent = [json.loads(p.data) for p in stats["parts_in"]]
    assert [m.get("text") for m in sent if m["type"] == "synthesize"] == SENTENCES
    assert sent[-1] == {"type": "close"}
    assert all(p.data_type == "UTF8" for p in stats["parts_in"])

    starts = [e for e in events if isinstance(e, RequestStarted)]
    completes = [e for e in events if isinstance(e, RequestCompleted)]
    assert len(starts) == len(completes) == len(SENTENCES)
    for started, completed in zip(starts, completes, strict=True):
        audio = b"".join(
            e.data for e in events if isinstance(e, AudioChunk) and e.request_id == started.request_id
        )
        assert len(audio) == completed.audio_bytes > 0
        assert len(audio) % 2 == 0
        assert 0.3 < completed.duration_s < 10.0
    # Strict order: all of the first request's audio before any of the second's.
    order = [e.request_id for e in events if isinstance(e, AudioChunk)]
    assert order == sorted(order, key=[s.request_id for s in starts].index)
    assert transport.invoked_variant == "AllTraffic"


def test_sagemaker_http2_voice_handler_end_to_end(sagemaker_front: FakeSageMaker) -> None:
    from agentcore_app.scripted import ScriptedModel
    from strands import Agent

    from strands_voice.agent._handler import VoiceCallbackHandler

    answer = "Sure, here is the plan. It costs ten dollars a month. You can cancel at any time."
    audio: list[bytes] = []
    voice = VoiceCallbackHandler(sagemaker_front.url(), on_audio=audio.append, silence_timeout=60.0)
    try:
        events: list[dict[str, Any]] = []
        voice.on_event = events.append
        agent = Agent(
            model=ScriptedModel(text=answer, first_sentence_s=0.2, total_s=1.0), callback_handler=voice
        )
        result = agent("What does the plan cost?")
        assert answer in str(result)
        assert voice.wait(timeout=120.0), "speech did not finish"
    finally:
        voice.close()

    types = [e["type"] for e in events]
    assert "error" not in types, [e for e in events if e["type"] == "error"]
    assert types[0] == "audio_start" and types[-1] == "audio_end"
    sentences = [e for e in events if e["type"] == "sentence_complete"]
    assert len(sentences) >= 2
    assert all(s["duration_s"] > 0.2 for s in sentences)
    assert sum(len(a) for a in audio) > 0
    assert events[-1]["duration_s"] > 1.0
    spoken = [json.loads(p.data).get("text") for p in sagemaker_front.stats["parts_in"]]
    assert "".join(t for t in spoken if t).replace(" ", "") == answer.replace(" ", "")
    assert sagemaker_front.stats["bad_signatures"] == 0


def test_sagemaker_http2_dropped_stream_without_resume_is_connection_lost(
    sagemaker_front: FakeSageMaker,
) -> None:
    sagemaker_front.stats["drop_after"] = 2  # synthesis_start and one audio frame, then the stream dies

    async def scenario() -> None:
        transport = SageMakerTransport.from_url(sagemaker_front.url())
        async with TTSSession(transport, silence_timeout=30.0, retry=NO_RETRY) as session:
            await session.synthesize(SENTENCES[0])
            await session.finish()
            async for _ in session:
                pass

    with pytest.raises(TTSConnectionError) as info:
        run(scenario(), timeout=60.0)
    assert info.value.code == "connection_lost"


def test_sagemaker_http2_dropped_stream_is_resumed_and_the_answer_completes(
    sagemaker_front: FakeSageMaker,
) -> None:
    """The REAL CRT client, a real HTTP/2 stream reset mid-audio, the real endpoint: speech resumes at
    the sample where it stopped (``skip_samples``)."""
    # synthesis_start, sentence 0's audio and complete, sentence 1's start and first audio: then reset.
    sagemaker_front.stats["drop_once"] = True

    async def scenario() -> tuple[list[Any], list[str], int]:
        transport = SageMakerTransport.from_url(sagemaker_front.url())
        async with TTSSession(transport, silence_timeout=60.0) as session:
            rids = [await session.synthesize(text) for text in SENTENCES]
            await session.finish()
            events: list[Any] = []
            async for event in session:
                events.append(event)
                if isinstance(event, AudioChunk) and event.request_id == rids[1]:
                    if sagemaker_front.stats.get("drops", 0) == 0:
                        # Drop at the very next frame out: mid sentence 1's audio.
                        sagemaker_front.stats["drop_after"] = sagemaker_front.stats["frames_out"] + 1
            return events, rids, session.reconnects

    events, (r0, r1), reconnects = run(scenario(), timeout=240.0)
    assert sagemaker_front.stats["drops"] == 1 and reconnects == 1
    completes = [e for e in events if isinstance(e, RequestCompleted)]
    assert [e.request_id for e in completes] == [r0, r1]
    # Sentence 1 was resumed at the sample where delivery stopped: no replay, no byte given twice.
    assert not any(isinstance(e, RequestRestarted) for e in events)
    assert [e.request_id for e in events if isinstance(e, RequestStarted)] == [r0, r1]
    for completed in completes:
        audio = b"".join(
            e.data for e in events if isinstance(e, AudioChunk) and e.request_id == completed.request_id
        )
        assert len(audio) == completed.audio_bytes > 0
    sent = [json.loads(p.data) for p in sagemaker_front.stats["parts_in"]]
    synthesized = [(m["request_id"], m.get("skip_samples")) for m in sent if m["type"] == "synthesize"]
    assert [rid for rid, _ in synthesized] == [r0, r1, f"{r1}~1"]
    assert synthesized[2][1] is not None and synthesized[2][1] > 0
    assert sagemaker_front.stats["bad_signatures"] == 0


@pytest.fixture
def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port


def test_sagemaker_http2_container_refusal_is_typed(
    closed_port: int, trusted: TLSFiles, aws_env: None
) -> None:
    front_iter = _serve(f"ws://127.0.0.1:{closed_port}/invocations-bidirectional-stream", trusted)
    front = next(front_iter)
    try:

        async def scenario() -> SageMakerStreamError:
            transport = SageMakerTransport.from_url(front.url())
            with pytest.raises(SageMakerStreamError) as info:
                await transport.connect()
            await transport.close()
            return info.value

        error = run(scenario(), timeout=60.0)
    finally:
        front_iter.close()
    assert error.error_type == "ModelError" and error.sagemaker_code == "ModelError"
    assert error.code == "connection_failed" and not error.retryable
    assert "502" in error.message
    assert threading.active_count() < 50


# ---- the same failure, the same code, whatever the transport --------------------------------------


async def _dropping_container(ws: ServerConnection) -> None:
    """A container that starts the first request, sends one audio frame, then drops the TCP connection."""
    message = json.loads(await ws.recv())
    await ws.send(json.dumps({"type": "synthesis_start", "request_id": message["request_id"]}))
    await ws.send(b"\x01" * 96)
    ws.transport.abort()


async def _first_error(transport: FrameTransport) -> TTSError:
    """Speak one sentence on a session that does not resume; the error that ends it."""
    with pytest.raises(TTSError) as info:
        async with TTSSession(transport, silence_timeout=60.0, retry=NO_RETRY) as session:
            await session.synthesize(SENTENCES[0])
            await session.finish()
            async for _ in session:
                pass
    return info.value


@pytest.mark.parametrize("failure", ["refused", "dropped"])
def test_the_same_failure_has_the_same_code_on_both_transports(
    failure: str, closed_port: int, trusted: TLSFiles, aws_env: None
) -> None:
    """One container misbehaving the same way, reached directly (WebSocket) and through SageMaker."""

    async def scenario() -> tuple[TTSError, TTSError]:
        async with contextlib.AsyncExitStack() as stack:
            if failure == "refused":
                container_url = f"ws://127.0.0.1:{closed_port}{BIDI_PATH}"
            else:
                server = await stack.enter_async_context(serve(_dropping_container, "127.0.0.1", 0))
                container_url = f"ws://127.0.0.1:{server.sockets[0].getsockname()[1]}{BIDI_PATH}"
            front_iter = _serve(container_url, trusted)
            stack.callback(front_iter.close)
            front = next(front_iter)
            over_websocket = await _first_error(WebSocketTransport(container_url))
            over_sagemaker = await _first_error(SageMakerTransport.from_url(front.url()))
            return over_websocket, over_sagemaker

    over_websocket, over_sagemaker = run(scenario(), timeout=90.0)
    expected = {"refused": "connection_failed", "dropped": "connection_lost"}[failure]
    assert isinstance(over_websocket, TTSConnectionError) and isinstance(over_sagemaker, TTSConnectionError)
    assert over_websocket.code == over_sagemaker.code == expected
    assert expected in TRANSPORT_ERROR_CODES and expected in AGENT_ERROR_CODES
