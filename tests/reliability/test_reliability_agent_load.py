"""Agent-side load: N concurrent AgentCore invocations over the app's HTTP interface, real endpoint.

Each invocation is a fresh agent (the app makes one per request) with the scripted model and its own
TTS session to the real ONNX endpoint. The test drives only ``POST /invocations`` and reads the SSE
stream with the library's incremental decoder, so it does not depend on the app's internals.

Checked for every answer: text complete, audio complete and in order (``audio_chunk.seq`` 0..n-1,
sentence indices never going back, each sentence's bytes equal to its ``sentence_complete`` duration and
the same in every answer), no sentence lost or duplicated, no ``error``; after the rounds: no endpoint
session, socket, thread or asyncio task left behind, and resident memory flat from round to round.

N = 8 in CI; ``--run-slow`` runs N = 32 (the benchmark in docs/reliability.md). Time to first audio is
measured at the caller (request sent -> first ``audio_chunk`` received) and reported, never asserted.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import psutil
import pytest
from strands_voice_protocol.sse import SSEDecoder
from support.reliability import percentile, rss_mb, wait_for

ANSWER = "Sure, I can help with that. Your order ships tomorrow morning."
SENTENCES = 2
CI_INVOCATIONS = 8
BENCH_INVOCATIONS = 32
ROUNDS = 3


@dataclass
class Answer:
    """One invocation as the caller saw it."""

    events: list[dict[str, Any]] = field(default_factory=list)
    first_audio_s: float | None = None


def _live_tasks() -> int:
    """Unfinished asyncio tasks on every loop of this process (the app's server thread included)."""
    # type(), not isinstance(): some objects (torch's deprecated aliases) warn when asked for __class__.
    return sum(1 for obj in gc.get_objects() if issubclass(type(obj), asyncio.Task) and not obj.done())


#: Idle workers of thread pools (asyncio's default executor, ThreadPoolExecutor, AnyIO's, bounded at 40) stay
#: alive by design; AnyIO prunes its idle ones only when new work comes.
_POOL_THREADS = ("asyncio_", "ThreadPoolExecutor", "AnyIO worker thread")


def _threads() -> list[str]:
    """Threads that are not idle pool workers (a voice response's worker thread, a server, ...)."""
    return sorted(t.name for t in threading.enumerate() if not t.name.startswith(_POOL_THREADS))


def _tcp_connections() -> int:
    return len(psutil.Process().net_connections(kind="tcp"))


async def _invoke(client: httpx.AsyncClient, url: str) -> Answer:
    answer = Answer()
    started = time.monotonic()
    decoder = SSEDecoder()
    async with client.stream("POST", url, json={"prompt": "Where is my order?"}) as response:
        assert response.status_code == 200, await response.aread()
        async for data in response.aiter_raw():
            for event in decoder.feed(data):
                decoded = event.json()
                if decoded["type"] == "audio_chunk" and answer.first_audio_s is None:
                    answer.first_audio_s = time.monotonic() - started
                answer.events.append(decoded)
    for event in decoder.flush():
        answer.events.append(event.json())
    return answer


def _check(answer: Answer) -> dict[int, int]:
    """Check one answer; returns its audio bytes per sentence."""
    events = answer.events
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end", kinds
    assert "error" not in kinds, [e for e in events if e["type"] == "error"]
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == ANSWER
    chunks = [e for e in events if e["type"] == "audio_chunk"]
    assert [c["seq"] for c in chunks] == list(range(len(chunks))), (
        "audio chunks lost, duplicated or reordered"
    )
    order = [c["sentence"] for c in chunks]
    assert order == sorted(order), "a sentence's audio came after the next one's"
    done = [e for e in events if e["type"] == "sentence_complete"]
    assert [d["sentence"] for d in done] == list(range(SENTENCES)), "a sentence lost or duplicated"
    sizes: dict[int, int] = {}
    for chunk in chunks:
        sizes[chunk["sentence"]] = sizes.get(chunk["sentence"], 0) + len(base64.b64decode(chunk["data"]))
    for sentence in done:
        size = sizes.get(sentence["sentence"], 0)
        assert size > 0 and size % 2 == 0
        assert abs(sentence["duration_s"] * 48_000 - size) <= 1.0, (sentence, size)
    return sizes


def _app(tts_url: str) -> Any:
    from agentcore_app.app import create_app
    from agentcore_app.scripted import ScriptedModel

    # Text streams over 1 s, as a fast model's would; the app makes a fresh agent per invocation.
    model = ScriptedModel(text=ANSWER, first_sentence_s=0.2, total_s=1.0)
    return create_app(tts_url=tts_url, model=model, silence_timeout=600)


@pytest.fixture
def app_server(reliability_endpoint: Any) -> Iterator[Any]:
    from kokoro_endpoint.serving.runner import running_server

    with running_server(_app(reliability_endpoint.server.ws_url)) as server:
        yield server


async def _round(base_url: str, invocations: int) -> tuple[list[Answer], float]:
    limits = httpx.Limits(max_connections=invocations, max_keepalive_connections=0)
    timeout = httpx.Timeout(30, read=1200)
    started = time.monotonic()
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:
        answers = await asyncio.gather(
            *(_invoke(client, f"{base_url}/invocations") for _ in range(invocations))
        )
    return list(answers), time.monotonic() - started


@pytest.mark.timeout(3600)
def test_reliability_agent_load_concurrent_invocations(
    reliability_endpoint: Any, app_server: Any, full_run: bool, figures: dict[str, Any]
) -> None:
    invocations = BENCH_INVOCATIONS if full_run else CI_INVOCATIONS
    # Settle: one invocation warms every code path (imports, the engine's first call) before baselines.
    asyncio.run(_round(app_server.base_url, 1))
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 60)
    gc.collect()
    baseline = {"tasks": _live_tasks(), "tcp": _tcp_connections(), "threads": len(_threads())}

    sizes_by_sentence: dict[int, set[int]] = {}
    ttfa: list[float] = []
    rss_after: list[float] = []
    walls: list[float] = []
    for _ in range(ROUNDS):
        answers, wall = asyncio.run(_round(app_server.base_url, invocations))
        walls.append(wall)
        for answer in answers:
            for sentence, size in _check(answer).items():
                sizes_by_sentence.setdefault(sentence, set()).add(size)
            assert answer.first_audio_s is not None
            ttfa.append(answer.first_audio_s)
        # Nothing left behind: every TTS session ended at the endpoint, every socket and task closed.
        assert wait_for(lambda: reliability_endpoint.sessions == 0, 60), reliability_endpoint.sessions
        assert wait_for(lambda: _live_tasks() <= baseline["tasks"], 30), (_live_tasks(), baseline)
        assert wait_for(lambda: _tcp_connections() <= baseline["tcp"], 30), (_tcp_connections(), baseline)
        assert wait_for(lambda: len(_threads()) <= baseline["threads"], 30), (_threads(), baseline)
        gc.collect()
        rss_after.append(rss_mb())
    # The same sentence is the same number of bytes in every answer: no audio lost or duplicated anywhere.
    assert all(len(sizes) == 1 for sizes in sizes_by_sentence.values()), sizes_by_sentence

    figures["agent_load_invocations_x_rounds"] = f"{invocations} x {ROUNDS} ({'bench' if full_run else 'CI'})"
    figures["agent_load_round_wall_s"] = [round(w, 1) for w in walls]
    figures["agent_load_ttfa_p50_s"] = round(percentile(ttfa, 50), 2)
    figures["agent_load_ttfa_p95_s"] = round(percentile(ttfa, 95), 2)
    figures["agent_load_ttfa_max_s"] = round(max(ttfa), 2)
    figures["agent_load_rss_after_round_mb"] = [round(r, 1) for r in rss_after]
    figures["agent_load_threads_all_at_end"] = threading.active_count()
    # Flat: after the first round has grown every pool, later rounds add nothing that stays.
    assert rss_after[-1] - rss_after[0] < 30.0, rss_after
