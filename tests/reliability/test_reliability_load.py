"""Load and soak on loopback against the real ONNX endpoint.

- 32 concurrent WebSocket sessions x 5 pipelined chunks: every request answered once, in order, never
  interleaved, every audio byte accounted for (bytes == audio_bytes == duration x 48,000, and the same
  text gives the same number of bytes in every session); p95 time to first audio reported.
- Soak: sessions opened and closed back to back (with bad frames, cancels and abrupt disconnects mixed
  in) for 25 s in CI, 300 s with --run-slow; resident memory must stay flat.

CI runs the shortened forms (one-word chunks, 25 s soak); ``--run-slow`` runs 2-4 word chunks and 300 s.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

import pytest
from support.reliability import (
    LOAD_SESSIONS,
    check_complete,
    group_replies,
    percentile,
    read_until,
    rss_mb,
    run_session,
    synthesize_frame,
    wait_for,
)
from websockets.asyncio.client import connect

SHORT_CHUNKS = ["Yes.", "Okay.", "Sure.", "Thanks.", "Good."]
FULL_CHUNKS = [
    "Yes, of course.",
    "That sounds fine.",
    "Let me check that.",
    "Here it is now.",
    "Thanks a lot.",
]
CHUNKS_PER_SESSION = 5


# 160 one-word requests take ~1 min at 0.3 RTF; a shared 2-core machine can be several times slower.
@pytest.mark.timeout(1800)
def test_reliability_load_concurrent_sessions(
    reliability_endpoint: Any, full_run: bool, figures: dict[str, Any]
) -> None:
    chunks = FULL_CHUNKS if full_run else SHORT_CHUNKS
    url = reliability_endpoint.server.ws_url

    async def run() -> list[Any]:
        sessions = []
        for index in range(LOAD_SESSIONS):
            # Each session speaks the chunks in its own rotation, so requests differ across sessions.
            texts = [chunks[(index + k) % len(chunks)] for k in range(CHUNKS_PER_SESSION)]
            sessions.append(run_session(url, texts, prefix=f"s{index}", limit_s=900))
        return await asyncio.gather(*sessions)

    started = time.monotonic()
    results = asyncio.run(run())
    wall = time.monotonic() - started

    bytes_by_text: dict[str, set[int]] = {}
    audio_s = 0.0
    for index, result in enumerate(results):
        texts = [chunks[(index + k) % len(chunks)] for k in range(CHUNKS_PER_SESSION)]
        # Every request answered, once, in the order sent.
        assert [r.request_id for r in result.replies] == [f"s{index}-{k}" for k in range(CHUNKS_PER_SESSION)]
        for reply, text in zip(result.replies, texts, strict=True):
            check_complete(reply)
            bytes_by_text.setdefault(text, set()).add(len(reply.audio))
            audio_s += len(reply.audio) / 48_000
    # No audio lost or duplicated anywhere: the same text is the same length in all 32 sessions.
    assert all(len(sizes) == 1 for sizes in bytes_by_text.values()), bytes_by_text
    ttfa = [r.first_audio_s for r in results if r.first_audio_s is not None]
    assert len(ttfa) == LOAD_SESSIONS
    figures["load_sessions_x_chunks"] = (
        f"{LOAD_SESSIONS} x {CHUNKS_PER_SESSION} ({'full' if full_run else 'CI'})"
    )
    figures["load_wall_s"] = round(wall, 1)
    figures["load_audio_s"] = round(audio_s, 1)
    figures["load_rtf"] = round(wall / audio_s, 3)
    figures["load_ttfa_p50_s"] = round(percentile(ttfa, 50), 2)
    figures["load_ttfa_p95_s"] = round(percentile(ttfa, 95), 2)
    figures["load_ttfa_max_s"] = round(max(ttfa), 2)
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 10)


async def _soak_round(url: str, round_index: int) -> None:
    """One session: two requests, a bad frame, sometimes a cancel or an abrupt disconnect."""
    kind = round_index % 4
    ws = await connect(url, open_timeout=60)
    try:
        await ws.send(synthesize_frame("Hi.", f"r{round_index}-a"))
        await ws.send(b"\xff not json")
        await ws.send(synthesize_frame("Okay.", f"r{round_index}-b"))
        if kind == 1:
            await ws.send(json.dumps({"type": "cancel", "request_id": f"r{round_index}-b"}))
        if kind == 2:
            while not isinstance(await asyncio.wait_for(ws.recv(), 120), bytes):
                pass
            ws.transport.abort()  # the client vanishes mid-answer
            return
        replies = group_replies(await read_until(ws, 3, limit_s=240))
        assert [r.kind for r in replies][:2] == ["synthesis_complete", "error"]
        check_complete(replies[0])
        if kind != 1:
            check_complete(replies[2])
        await ws.send(json.dumps({"type": "close"}))
        await asyncio.wait_for(ws.wait_closed(), 10)
    finally:
        await ws.close()


@pytest.mark.timeout(900)
def test_reliability_load_soak_memory_stays_flat(
    reliability_endpoint: Any, full_run: bool, figures: dict[str, Any]
) -> None:
    duration_s = 300.0 if full_run else 25.0
    url = reliability_endpoint.server.ws_url

    async def run(rounds: range | None, until: float | None) -> int:
        done = 0
        index = 0 if rounds is None else rounds.start
        while (rounds is not None and index < rounds.stop) or (
            until is not None and time.monotonic() < until
        ):
            # Two sessions at once, so sessions overlap as they would behind several callers.
            await asyncio.gather(_soak_round(url, index), _soak_round(url, index + 1))
            index += 2
            done += 2
            if index > 100_000:
                break  # bounded whatever the clock does
        return done

    asyncio.run(run(range(0, 4), None))  # warm every code path before the first reading
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 20)
    gc.collect()
    start_rss = rss_mb()
    started = time.monotonic()
    sessions = asyncio.run(run(None, started + duration_s))
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 20), reliability_endpoint.sessions
    gc.collect()
    end_rss = rss_mb()
    figures["soak_s"] = round(time.monotonic() - started, 1)
    figures["soak_sessions"] = sessions
    figures["soak_rss_start_mb"] = round(start_rss, 1)
    figures["soak_rss_end_mb"] = round(end_rss, 1)
    assert sessions >= 4
    # Flat: a leak of even a few kB per session over hundreds of sessions would show; allocator and
    # onnxruntime arena noise stays well inside this.
    assert end_rss - start_rss < 40.0, (start_rss, end_rss)
