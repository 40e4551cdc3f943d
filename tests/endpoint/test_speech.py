"""The endpoint's audio is real speech: offline Whisper transcribes it with a low word error rate."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import numpy as np
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from support.endpoint import collect, replies, whisper_input
from websockets.asyncio.client import connect

jiwer = require("jiwer", "asr")

SENTENCES = [
    "The weather is nice today.",
    "Please open the front door.",
    "I would like a cup of coffee.",
]


def test_speech_is_intelligible(endpoint_server: RunningServer, whisper_model: Any) -> None:
    async def run() -> list[bytes]:
        async with connect(endpoint_server.ws_url) as ws:
            for index, sentence in enumerate(SENTENCES):
                await ws.send(json.dumps({"text": sentence, "request_id": f"w{index}"}).encode())
            got = replies(await collect(ws, terminals=len(SENTENCES)))
        assert [r.kind for r in got] == ["synthesis_complete"] * len(SENTENCES)
        return [bytes(r.audio) for r in got]

    audios = asyncio.run(run())
    heard = []
    for pcm in audios:
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        segments, _info = whisper_model.transcribe(whisper_input(samples), language="en", beam_size=1)
        heard.append(" ".join(segment.text for segment in segments))
    reference = " ".join(" ".join(re.findall(r"[a-z']+", s.lower())) for s in SENTENCES)
    hypothesis = " ".join(" ".join(re.findall(r"[a-z']+", h.lower())) for h in heard)
    error_rate = jiwer.wer(reference, hypothesis)
    assert error_rate <= 0.15, f"WER {error_rate:.2f}: heard {heard!r}"
