"""``agent-infra demo``: time to first audio per mode, against a running app (local or deployed)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import boto3
import pytest
import uvicorn
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from strands_voice_infra import agent_cli
from strands_voice_infra.demo import format_results, run_demo, runtime_stream

AUDIO = base64.b64encode(b"\x01\x00" * 240).decode()
RUNTIME_ARN = "arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/strands_voice_agent-abc123"


def _events(mode: str) -> list[dict[str, Any]]:
    """What the app streams: bidi speaks after the first sentence, batch only once the text is done."""
    audio_at = 0.05 if mode == "bidi" else 0.4
    return [
        {"type": "agent_start", "t_ms": 0, "mode": mode, "request_id": "r1"},
        {"type": "text_delta", "t_ms": 10, "seq": 0, "text": "Hello there. "},
        {
            "type": "audio_start",
            "t_ms": 12,
            "format": "pcm16",
            "sample_rate": 24000,
            "channels": 1,
            "_sleep": audio_at,
        },
        {"type": "audio_chunk", "t_ms": audio_at * 1000, "seq": 0, "sentence": 0, "data": AUDIO},
        {"type": "audio_chunk", "t_ms": audio_at * 1000 + 5, "seq": 1, "sentence": 0, "data": AUDIO},
        {"type": "audio_end", "t_ms": 500, "chunks": 2, "duration_s": 0.02},
        {"type": "agent_end", "t_ms": 510, "ttfa_ms": audio_at * 1000, "text_ms": 10, "audio_ms": 500},
    ]


def _sse(events: list[dict[str, Any]]) -> Iterator[tuple[bytes, float]]:
    """SSE frames, each split mid-event across two writes to exercise buffering."""
    for event in events:
        sleep = event.pop("_sleep", 0.0)
        frame = f"data: {json.dumps(event)}\n\n".encode()
        yield frame[:7], sleep
        yield frame[7:], 0.0


def make_app() -> Starlette:
    seen: list[dict[str, Any]] = []

    async def invocations(request: Request) -> StreamingResponse:
        payload = await request.json()
        seen.append(payload)

        async def body() -> AsyncIterator[bytes]:
            yield b": keep-alive comment\n\n"
            for piece, sleep in _sse(_events(payload.get("mode", "bidi"))):
                if sleep:
                    await asyncio.sleep(sleep)
                yield piece

        return StreamingResponse(body(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/invocations", invocations, methods=["POST"])])
    app.state.seen = seen
    return app


@pytest.fixture(scope="module")
def app_url() -> Iterator[tuple[str, Starlette]]:
    """The inline app on uvicorn, on a free loopback port, for this module."""
    app = make_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", app
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_demo_against_a_local_app(app_url: tuple[str, Starlette]) -> None:
    url, app = app_url
    out = io.StringIO()
    assert agent_cli.main(["demo", "--endpoint-url", url, "--prompt", "Say hi"], stdout=out) == 0
    text = out.getvalue()
    lines = text.splitlines()
    assert lines[0] == f"asking {url}: 'Say hi'"
    assert lines[1].startswith("bidi   first audio") and "(server 50 ms)" in lines[1]
    assert lines[2].startswith("batch  first audio") and "(server 400 ms)" in lines[2]
    assert "2 audio chunks, 960 bytes" in lines[1]
    assert "time to first audio, bidi:" in text and "time to first audio, batch:" in text
    assert "bidi speaks" in text and "sooner than batch" in text
    assert app.state.seen[-2:] == [
        {"prompt": "Say hi", "mode": "bidi"},
        {"prompt": "Say hi", "mode": "batch"},
    ]


def test_demo_json_measures_from_the_client(app_url: tuple[str, Starlette]) -> None:
    url, _ = app_url
    out = io.StringIO()
    argv = ["demo", "--endpoint-url", f"{url}/invocations", "--prompt", "x", "--json", "--voice", "af_heart"]
    assert agent_cli.main(argv, stdout=out) == 0
    bidi, batch = json.loads(out.getvalue())
    assert (bidi["mode"], batch["mode"]) == ("bidi", "batch")
    assert bidi["first_audio_s"] < batch["first_audio_s"]
    assert batch["first_audio_s"] >= 0.35  # the client saw the server's delay, not a buffered response
    assert bidi["first_text_s"] <= bidi["first_audio_s"] <= bidi["total_s"]
    assert (bidi["server_ttfa_ms"], bidi["audio_chunks"], bidi["errors"]) == (50.0, 2, [])


def test_demo_single_mode_and_repeat(app_url: tuple[str, Starlette]) -> None:
    url, _ = app_url
    out = io.StringIO()
    argv = ["demo", "--endpoint-url", url, "--prompt", "x", "--modes", "batch", "--repeat", "2"]
    assert agent_cli.main(argv, stdout=out) == 0
    assert "time to first audio, batch: " in out.getvalue() and "(median of 2)" in out.getvalue()
    assert "bidi" not in out.getvalue()


def test_demo_unknown_mode_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(
            ["demo", "--endpoint-url", "http://127.0.0.1:9", "--prompt", "x", "--modes", "bidi,stream"]
        )
    assert caught.value.code == 2
    assert (
        capsys.readouterr().err.strip()
        == "agent-infra: error: unknown mode(s) stream; choose from bidi, batch"
    )


def test_demo_unreachable_app_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(SystemExit) as caught:
        agent_cli.main(
            ["demo", "--endpoint-url", f"http://127.0.0.1:{port}", "--prompt", "x"], stdout=io.StringIO()
        )
    assert caught.value.code == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"agent-infra: error: could not reach http://127.0.0.1:{port}")
    assert "\n" not in err


def test_demo_through_invoke_agent_runtime(aws_env: None) -> None:
    client = boto3.client("bedrock-agentcore", region_name="us-east-1")
    stubber = Stubber(client)
    for mode in ("bidi", "batch"):
        body = b"".join(piece for piece, _ in _sse(_events(mode)))
        stubber.add_response(
            "invoke_agent_runtime",
            {
                "response": StreamingBody(io.BytesIO(body), len(body)),
                "contentType": "text/event-stream",
                "runtimeSessionId": "s" * 40,
                "statusCode": 200,
            },
            {
                "agentRuntimeArn": RUNTIME_ARN,
                "runtimeSessionId": ANY,
                "payload": json.dumps({"prompt": "hi", "mode": mode}).encode(),
                "contentType": "application/json",
                "accept": "text/event-stream",
            },
        )
    with stubber:
        results = run_demo(runtime_stream(client, RUNTIME_ARN), "hi")
    stubber.assert_no_pending_responses()
    assert [(r.mode, r.server_ttfa_ms, len(r.audio)) for r in results] == [
        ("bidi", 50.0, 2),
        ("batch", 400.0, 2),
    ]
    assert all(r.first_audio_s is not None for r in results)
    assert (
        format_results(results)[-1].endswith("sooner than batch")
        or "sooner than bidi" in format_results(results)[-1]
    )


def test_runtime_sessions_are_long_enough_and_shared() -> None:
    sessions: list[str] = []

    class Client:
        def invoke_agent_runtime(self, **kwargs: Any) -> dict[str, Any]:
            sessions.append(kwargs["runtimeSessionId"])
            return {"response": StreamingBody(io.BytesIO(b""), 0)}

    opener = runtime_stream(Client(), RUNTIME_ARN)
    for payload in ({"prompt": "a", "mode": "bidi"}, {"prompt": "a", "mode": "batch"}):
        assert list(opener(payload)) == []
    assert len(set(sessions)) == 1 and len(sessions[0]) >= 33


def test_the_demo_reads_sse_whole_however_it_is_chunked() -> None:
    """The demo is the shared Leg 3 client: events split anywhere, CRLF, comments, non-JSON reported."""
    stream = (
        b': comment\r\n\r\ndata: {"type": "text_delta",\r\ndata:  "t_ms": 1, "seq": 0, "text": "a"}\r\n\r\n'
        b'data: not json\n\nevent: x\ndata: {"type": "text_delta", "t_ms": 2, "seq": 1, "text": "b"}\n\n'
    )

    def opener(payload: dict[str, Any]) -> Iterator[bytes]:
        for i in range(len(stream)):  # one byte at a time: no event may depend on transport chunking
            yield stream[i : i + 1]

    (result,) = run_demo(opener, "hi", modes=["bidi"])
    assert result.text == "ab" and [e["type"] for e in result.events] == ["text_delta", "text_delta"]
    assert result.error_lines == ["client: an event that is not JSON"]


def test_error_events_are_reported(app_url: tuple[str, Starlette]) -> None:
    def opener(payload: dict[str, Any]) -> Iterator[bytes]:
        yield b'data: {"type": "text_delta", "t_ms": 1, "seq": 0, "text": "hi"}\n\n'
        yield b'data: {"type": "error", "t_ms": 2, "code": "tts_unavailable", "message": "speech down"}\n\n'
        yield b'data: {"type": "audio_chunk", "t_ms": 3, "seq": 0, "sentence": 0, "data": "***"}\n\n'

    (result,) = run_demo(opener, "hi", modes=["bidi"])
    assert result.error_lines == ["tts_unavailable: speech down", "client: undecodable audio chunk"]
    assert result.first_text_s is not None
