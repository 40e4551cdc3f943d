"""Four staggered listeners on the CPU endpoint, admission off against on (the default), side by side.

Not a test (pytest does not collect it). Run from the repository root:

    HF_HUB_OFFLINE=1 uv run python scripts/measure_admission.py [--known-rate] [JSON]

One real engine (Kokoro int8 ONNX), two endpoints on loopback that differ only in
``Settings.admission_max_load`` (None, and the default). Per configuration, four listeners open one every
0.7 s, each through the library's ``TTSSession`` (its retry: a ``busy`` is tried again after a backoff), and
each asks for the bench's 267-character answer. A real-time player per listener starts at its first audio;
its stalls are the gaps it waits for audio (over 20 ms, timer noise). Also per listener: when its first
audio came (from its first try) and how many times the endpoint refused it (counted from the endpoint's
log, by the wire id the session gave each try).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from strands_voice_protocol.audio import BYTES_PER_SECOND

STAGGER_S = 0.7
LISTENERS = 4


class _Refusals(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "refused" in record.getMessage():
            self.count += 1


async def _listener(url: str, delay_s: float, text: str) -> dict[str, Any]:
    from strands_voice_tools.bench.stats import simulate_playback

    from strands_voice.session import AudioChunk, RequestCompleted, TTSSession
    from strands_voice.transports import WebSocketTransport

    await asyncio.sleep(delay_s)
    asked = time.perf_counter()
    chunks: list[tuple[float, float]] = []
    async with TTSSession(WebSocketTransport(url)) as session:
        await session.synthesize(text)
        await session.finish()
        async for event in session:
            if isinstance(event, AudioChunk):
                chunks.append((time.perf_counter() - asked, len(event.data) / BYTES_PER_SECOND))
            elif isinstance(event, RequestCompleted):
                break
    # Gaps a player starting at the first audio waits: each over 20 ms is a stall.
    gaps = []
    play_end = chunks[0][0]
    for arrival, duration in chunks:
        if arrival - play_end > 0.02:
            gaps.append(arrival - play_end)
        play_end = max(play_end, arrival) + duration
    playback = simulate_playback(chunks, tolerance_s=0.02)
    return {
        "first_audio_s": round(chunks[0][0], 3),
        "stall_s": round(playback.stall_s, 3),
        "longest_stall_s": round(max(gaps, default=0.0), 3),
        "audio_s": round(sum(duration for _, duration in chunks), 2),
    }


async def _tried(url: str, delay_s: float, text: str) -> dict[str, Any]:
    """One listener's figures, or the error that ended it (the library gave up after its retry deadline)."""
    from strands_voice_protocol.errors import TTSError

    try:
        return await _listener(url, delay_s, text)
    except TTSError as error:
        return {"failed": f"{error.code}: {error}"}


async def _round(url: str, text: str) -> list[dict[str, Any]]:
    async with asyncio.timeout(900):
        return list(await asyncio.gather(*(_tried(url, n * STAGGER_S, text) for n in range(LISTENERS))))


class KnownRateEngine:
    """``--known-rate``: 0.25 s of tone per step, each step sleeping 0.1 s (a load of 0.4, the real engine's
    on a quiet 2-core CPU) and taking no CPU, so a machine busy with other work does not change the rate."""

    name = "known-rate"
    sample_rate = 24_000
    default_voice = "tone"
    voices = frozenset({"tone"})

    def warm_up(self) -> None:
        return None

    def synthesize(self, text: str, voice: str, speed: float) -> Any:
        import numpy as np

        tone = (0.2 * np.sin(np.arange(6000, dtype=np.float32) * 0.05)).astype(np.float32)
        for _ in range(16):  # 4 s a sentence: 16 s for the bench answer (16.8 s from Kokoro)
            time.sleep(0.1)
            yield tone


def main() -> int:
    from kokoro_endpoint.engines.silence import SilencePolicy
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings
    from strands_voice_tools.bench.texts import BENCH_TEXT
    from strands_voice_tools.demo import load_tts_engine
    from strands_voice_tools.machine import describe_machine, load_average

    known = "--known-rate" in sys.argv
    engine: Any = KnownRateEngine() if known else load_tts_engine()
    engine.warm_up()
    extra: dict[str, Any] = {"silence": SilencePolicy(trim=False)} if known else {}
    refusals = _Refusals()
    logging.getLogger("kokoro_endpoint").addHandler(refusals)
    logging.getLogger("kokoro_endpoint").setLevel(logging.INFO)
    results: dict[str, Any] = {
        "machine": describe_machine() if known else describe_machine(engine),
        "engine": engine.name,
        "stagger_s": STAGGER_S,
    }
    for name, max_load in (
        ("admission off", None),
        ("admission on (default)", Settings().admission_max_load),
    ):
        app = create_app(engine=engine, settings=Settings(admission_max_load=max_load, **extra))
        with running_server(app) as server:
            state = app.state.endpoint
            load = load_average()
            refusals.count = 0
            rows = asyncio.run(_round(server.ws_url, BENCH_TEXT))
            results[name] = {
                "listeners": rows,
                "refusals": refusals.count,
                "measured_load": state.scheduler.counters().load,
                "load_average": load,
            }
        print(name, json.dumps(results[name]), flush=True)
    paths = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    if paths:
        Path(paths[0]).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
