"""Leg 1 ``skip_samples`` on the real endpoint (ONNX): the request is synthesized whole and its audio sent
from that sample on, over the WebSocket route and ``POST /invocations`` (pcm16, and an encoded format:
skipped in samples before encoding); ``synthesis_start`` echoes it; word times stay relative to the
request's true start."""

from __future__ import annotations

import asyncio
import json

import httpx
from kokoro_endpoint.serving.runner import RunningServer
from strands_voice_protocol.audio import decode_audio
from support.endpoint import collect, replies
from websockets.asyncio.client import connect

TEXT = "First part of the answer, then a second part. And a last sentence after it."
SKIP = 30_001  # an odd sample count, inside a segment


def _request(rid: str, **extra: object) -> str:
    return json.dumps({"type": "synthesize", "text": TEXT, "request_id": rid, "timestamps": True, **extra})


def test_endpoint_skip_samples_over_websocket(endpoint_server: RunningServer) -> None:
    async def main() -> list[object]:
        async with connect(endpoint_server.ws_url, max_size=2**22) as ws:
            await ws.send(_request("whole"))
            await ws.send(_request("rest", skip_samples=SKIP))
            await ws.send(_request("none", skip_samples=10**9))
            return list(await collect(ws, 3))

    whole, rest, none = replies(asyncio.run(main()))  # type: ignore[arg-type]
    assert whole.start is not None and "skip_samples" not in whole.start
    assert rest.start is not None and rest.start["skip_samples"] == SKIP
    assert len(whole.audio) > 2 * SKIP
    assert bytes(rest.audio) == bytes(whole.audio)[2 * SKIP :]  # sample for sample
    assert rest.end is not None and rest.end["audio_bytes"] == len(rest.audio)
    # The words still to be heard (ending after the skip point), timed from the request's true start.
    whole_words = [w for _, frame in whole.words for w in frame["words"]]
    rest_words = [w for _, frame in rest.words for w in frame["words"]]
    assert rest_words == [w for w in whole_words if w["end_s"] > SKIP / 24_000]
    assert rest_words[0]["start_s"] < SKIP / 24_000 < rest_words[0]["end_s"]  # the word cut by the skip
    # Skipping past the end: a complete answer without audio.
    assert none.start is not None and none.start["skip_samples"] == 10**9
    assert none.end is not None and none.end["audio_bytes"] == 0 and not none.audio


def test_endpoint_skip_samples_over_invocations_before_encoding(endpoint_server: RunningServer) -> None:
    url = f"{endpoint_server.base_url}/invocations"
    with httpx.Client(timeout=240) as client:
        whole = client.post(url, json={"text": TEXT}).content
        rest = client.post(url, json={"text": TEXT, "skip_samples": SKIP}).content
        wav = client.post(url, json={"text": TEXT, "skip_samples": SKIP, "format": "wav"}).content
    assert rest == whole[2 * SKIP :]
    assert decode_audio(wav, "wav") == rest
