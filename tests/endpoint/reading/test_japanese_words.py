"""Word timestamps for Japanese (written without spaces): one word per word OpenJTalk finds, each indexing
the text as sent, in order, inside the audio; so a barge-in's heard text is cut at a Japanese word."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from support.endpoint import collect, replies
from websockets.asyncio.client import connect

TEXT = "プレミアムプランの概要を簡単にご説明します。料金は毎月お支払いいただきます。"


def _japanese_words(server: RunningServer) -> tuple[list[dict[str, Any]], float]:
    async def run() -> tuple[list[dict[str, Any]], float]:
        async with connect(server.ws_url, max_size=None) as ws:
            await ws.send(json.dumps({"text": TEXT, "voice": "jf_alpha", "timestamps": True}))
            reply = replies(await collect(ws, terminals=1))[0]
        words = [word for _, frame in reply.words for word in frame["words"]]
        return words, len(reply.audio) / 48_000

    return asyncio.run(run())


def test_japanese_words_are_timed_one_by_one(endpoint_server: RunningServer) -> None:
    require("pyopenjtalk", "ja")
    words, duration_s = _japanese_words(endpoint_server)
    texts = [word["word"] for word in words]
    assert {"プレミアム", "プラン", "概要", "説明", "料金"} <= set(texts), texts
    for word in words:
        assert TEXT[word["char_start"] : word["char_end"]] == word["word"]
        assert 0.0 <= word["start_s"] <= word["end_s"] <= duration_s + 0.05
    starts = [word["char_start"] for word in words]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    times = [word["start_s"] for word in words]
    assert times == sorted(times) and words[-1]["end_s"] > duration_s / 2
