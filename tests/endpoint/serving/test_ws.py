"""The Leg 1 WebSocket route against the real server (uvicorn, ONNX engine): frames, order, errors, cancel."""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
from kokoro_endpoint.serving.runner import RunningServer
from support.endpoint import collect, replies
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosedOK

BYTES_PER_SECOND = 48_000


def _binary(obj: object) -> bytes:
    return json.dumps(obj).encode("utf-8")


def _check_bookkeeping(reply: object) -> None:
    from support.endpoint import Reply

    assert isinstance(reply, Reply)
    assert reply.kind == "synthesis_complete", reply.end
    assert reply.start == {
        "type": "synthesis_start",
        "request_id": reply.request_id,
        "format": "pcm16",
        "sample_rate": 24000,
        "channels": 1,
    }
    assert reply.end is not None
    assert len(reply.audio) > 0 and len(reply.audio) % 2 == 0
    assert reply.end["audio_bytes"] == len(reply.audio)
    assert reply.end["total_duration_s"] == reply.end["audio_bytes"] / BYTES_PER_SECOND
    assert reply.end["elapsed_s"] > 0


def test_ping_is_ok_once_warm(endpoint_server: RunningServer) -> None:
    response = httpx.get(f"{endpoint_server.base_url}/ping", timeout=10)
    assert response.status_code == 200
    assert response.json()["engine"] == "onnx"


def test_binary_frames_many_requests_pipelined_in_order(endpoint_server: RunningServer) -> None:
    async def run() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            # Sent back to back, before any audio came back (the SageMaker case: binary frames).
            await ws.send(_binary({"type": "synthesize", "text": "Hello there.", "request_id": "a"}))
            await ws.send(_binary({"text": "Good morning.", "request_id": "b", "speed": 1.3}))
            await ws.send(_binary({"text": "Thank you."}))  # no type, no request_id: the sample dialect
            frames = await collect(ws, terminals=3)
        got = replies(frames)
        assert [r.request_id for r in got[:2]] == ["a", "b"]
        assert re.fullmatch(r"[0-9a-f]{32}", str(got[2].request_id))
        for reply in got:
            _check_bookkeeping(reply)

    asyncio.run(run())


def test_text_frames_and_graceful_close(endpoint_server: RunningServer) -> None:
    async def run() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            await ws.send(json.dumps({"type": "synthesize", "text": "Hi there.", "request_id": "t1"}))
            await ws.send(json.dumps({"type": "close"}))
            frames = await collect(ws, terminals=1)
            with pytest.raises(ConnectionClosedOK):
                await asyncio.wait_for(ws.recv(), 30)
            assert ws.close_code == 1000
        (reply,) = replies(frames)
        assert reply.request_id == "t1"
        _check_bookkeeping(reply)

    asyncio.run(run())


BAD_INPUTS: list[tuple[bytes | str, str]] = [
    (b"\xff\xfe\x00{", "invalid_json"),  # not UTF-8
    ("not json at all", "invalid_json"),
    ("[1, 2, 3]", "invalid_json"),  # JSON, but an array
    ('{"type": "synthesize"}', "invalid_request"),  # missing text
    ('{"type": "synthesize", "text": "   "}', "invalid_request"),  # empty text
    ('{"type": "synthesize", "text": 5}', "invalid_request"),  # wrong type
    ('{"text": "hi", "speed": "fast"}', "invalid_request"),
    ('{"text": "hi", "voice": 3}', "invalid_request"),
    ('{"text": "hi", "request_id": 12}', "invalid_request"),
    ('{"type": "dance"}', "invalid_request"),  # unknown type
    ('{"type": 7}', "invalid_request"),
    ('{"text": "hi", "speed": 3.0, "request_id": "fast"}', "invalid_request"),  # outside 0.5-2.0
    ('{"text": "hi", "speed": 0.1}', "invalid_request"),
    ('{"text": "hi", "voice": "af_nobody", "request_id": "v"}', "unknown_voice"),
    (json.dumps({"text": "a" * 5001, "request_id": "long"}), "text_too_long"),
    (json.dumps({"text": "b" * 70_000}), "invalid_request"),  # frame larger than max_frame_bytes
]


@pytest.mark.parametrize("as_binary", [True, False], ids=["binary", "text"])
def test_bad_input_gets_error_frames_and_the_session_keeps_working(
    endpoint_server: RunningServer, as_binary: bool
) -> None:
    async def run() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            for payload, _code in BAD_INPUTS:
                if isinstance(payload, bytes):
                    if not as_binary:
                        continue  # a text frame cannot carry invalid UTF-8
                    await ws.send(payload)
                else:
                    await ws.send(payload.encode() if as_binary else payload)
            await ws.send(json.dumps({"text": "Fine.", "request_id": "ok"}))
            expected = [code for payload, code in BAD_INPUTS if as_binary or isinstance(payload, str)]
            frames = await collect(ws, terminals=len(expected) + 1)
        got = replies(frames)
        assert [r.end["code"] for r in got[:-1] if r.end] == expected
        for reply in got[:-1]:
            assert reply.end is not None and reply.end["type"] == "error"
            message = reply.end["message"]
            assert message and "Traceback" not in message and "/" not in message and "Error" not in message
        by_id = {r.request_id: r.end["code"] for r in got[:-1] if r.end and r.request_id}
        assert by_id == {"fast": "invalid_request", "v": "unknown_voice", "long": "text_too_long"}
        _check_bookkeeping(got[-1])

    asyncio.run(run())


def test_cancel_one_request_mid_audio(endpoint_server: RunningServer) -> None:
    long_text = "This is the first sentence. Here is a second one. A third one follows. The fourth ends it."

    async def run() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            await ws.send(_binary({"text": long_text, "request_id": "c1"}))
            await ws.send(_binary({"text": "Next.", "request_id": "c2"}))
            while not isinstance(await ws.recv(), bytes):  # wait for c1's first audio
                pass
            await ws.send(_binary({"type": "cancel", "request_id": "c1"}))
            await ws.send(_binary({"type": "cancel", "request_id": "no-such-request"}))  # ignored
            frames = await collect(ws, terminals=2)
        # Frames after c1's first audio: maybe more c1 audio, then its end, then all of c2.
        controls = [i for i, f in enumerate(frames) if f.control is not None]
        assert frames[controls[0]].control == {"type": "synthesis_cancelled", "request_id": "c1"}
        after = frames[controls[0] + 1 :]
        (c2,) = replies(after)
        assert c2.request_id == "c2"
        _check_bookkeeping(c2)

    asyncio.run(run())


def test_cancel_all_is_barge_in(endpoint_server: RunningServer) -> None:
    async def run() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            for rid in ("x1", "x2", "x3"):
                await ws.send(_binary({"text": f"Request {rid} has a few words to say.", "request_id": rid}))
            await ws.send(_binary({"type": "cancel"}))
            await ws.send(_binary({"text": "After.", "request_id": "x4"}))
            frames = await collect(ws, terminals=4)
        got = replies(frames)
        assert [(r.request_id, r.kind) for r in got] == [
            ("x1", "synthesis_cancelled"),
            ("x2", "synthesis_cancelled"),
            ("x3", "synthesis_cancelled"),
            ("x4", "synthesis_complete"),
        ]
        _check_bookkeeping(got[-1])

    asyncio.run(run())


def test_a_cancel_after_close_still_drops_what_is_owed(endpoint_server: RunningServer) -> None:
    """An agent sends ``close`` once its model has written everything; a barge-in after that still stops
    the speech (the session ends at once, not after every owed sentence)."""
    long_text = "This sentence is here to take the engine a good while to speak, word after word. " * 3

    async def run() -> tuple[list[object], int | None]:
        async with connect(endpoint_server.ws_url) as ws:
            for n in range(4):
                await ws.send(json.dumps({"text": long_text, "voice": "jm_kumo", "request_id": f"r{n}"}))
            await ws.send(json.dumps({"type": "close"}))
            first = await ws.recv()  # the first reply has begun
            await ws.send(json.dumps({"type": "cancel"}))
            frames: list[object] = [first]
            try:
                while True:
                    frames.append(await asyncio.wait_for(ws.recv(), 30))
            except ConnectionClosedOK:
                pass
            return frames, ws.close_code

    frames, code = asyncio.run(run())
    texts = [json.loads(frame) for frame in frames if isinstance(frame, str)]
    assert code == 1000
    assert sum(t["type"] == "synthesis_complete" for t in texts) == 0
    assert {t["request_id"] for t in texts if t["type"] == "synthesis_cancelled"} == {"r0", "r1", "r2", "r3"}
