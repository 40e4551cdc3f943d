"""Faults: the endpoint killed mid-answer and restarted, the caller gone mid-answer, a stalled consumer.

Every wait is bounded; the endpoint process is killed in ``finally`` whatever happens.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from reliability_support import (
    EndpointProcess,
    ToneEngine,
    assert_no_leak,
    free_port,
    rss_mb,
    sse_events,
    synthesize_frame,
    wait_for,
)
from websockets.asyncio.client import connect

ANSWER = (
    "The first sentence is here for you. The second one follows right after it. "
    "A third sentence keeps the answer going. And the fourth one ends it."
)


def _app(tts_url: str, text: str, total_s: float) -> Any:
    from agentcore_app.app import create_app

    from strands_voice.scripted import ScriptedModel

    model = ScriptedModel(text=text, first_sentence_s=0.3, total_s=total_s)
    return create_app(tts_url=tts_url, model=model, silence_timeout=120)


@pytest.mark.timeout(900)  # two endpoint process start-ups (model load and warm-up)
def test_reliability_faults_endpoint_killed_mid_answer_then_restarted(
    tmp_path: Path, figures: dict[str, Any]
) -> None:
    from kokoro_endpoint.runner import running_server

    endpoint = EndpointProcess(free_port(), tmp_path / "endpoint.log")
    try:
        endpoint.start()
        # The text streams for 10 s, so the kill at the first audio lands while text is still coming.
        with running_server(_app(endpoint.ws_url, ANSWER, total_s=10.0)) as app:
            events: list[dict[str, Any]] = []
            killed_at = None
            deltas_after_kill = 0
            started = time.monotonic()
            with (
                httpx.Client(timeout=httpx.Timeout(10, read=90)) as client,
                client.stream("POST", f"{app.base_url}/invocations", json={"prompt": "Go"}) as response,
            ):
                assert response.status_code == 200
                for event in sse_events(response):
                    events.append(event)
                    if killed_at is not None and event["type"] == "text_delta":
                        deltas_after_kill += 1
                    if event["type"] == "audio_chunk" and killed_at is None:
                        endpoint.kill()  # SIGKILL mid-answer: no close frame, the socket is reset
                        killed_at = time.monotonic()
                    assert time.monotonic() - started < 180, "the answer never ended"
            assert killed_at is not None, "no audio arrived before the end of the answer"
            ended_after_kill = time.monotonic() - killed_at
            figures["endpoint_kill_to_agent_end_s"] = round(ended_after_kill, 2)
            figures["endpoint_kill_text_deltas_after_kill"] = deltas_after_kill
            kinds = [e["type"] for e in events]
            assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
            errors = [e for e in events if e["type"] == "error"]
            assert len(errors) == 1, errors  # reported once, not once per unspoken sentence
            assert errors[0]["code"] in {"connection_dropped", "connection_closed"}
            assert_no_leak(json.dumps(errors[0]))
            # The text still completes, every word once.
            assert "".join(e["text"] for e in events if e["type"] == "text_delta") == ANSWER
            sentences = [e["sentence"] for e in events if e["type"] == "sentence_complete"]
            assert len(sentences) == len(set(sentences)) < 4
            assert ended_after_kill < 30

            # Restart the endpoint on the same port: the same app serves the next request.
            endpoint.start()
            with (
                httpx.Client(timeout=httpx.Timeout(10, read=240)) as client,
                client.stream("POST", f"{app.base_url}/invocations", json={"prompt": "Again"}) as response,
            ):
                assert response.status_code == 200
                again = list(sse_events(response))
            kinds = [e["type"] for e in again]
            assert "error" not in kinds, again
            assert kinds[-1] == "agent_end" and "audio_chunk" in kinds
            assert [e["sentence"] for e in again if e["type"] == "sentence_complete"] == [0, 1, 2, 3]
    finally:
        endpoint.stop()


def test_reliability_faults_caller_disconnects_mid_answer(reliability_endpoint: Any) -> None:
    from kokoro_endpoint.runner import running_server

    sentences = 6
    text = " ".join(f"Sentence number {n} of a long answer that goes on." for n in range(sentences))
    engine = reliability_endpoint.engine
    with running_server(_app(reliability_endpoint.server.ws_url, text, total_s=2.0)) as app:
        calls_before = engine.calls
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(10, read=240)) as client,
                client.stream("POST", f"{app.base_url}/invocations", json={"prompt": "Go"}) as response,
            ):
                assert response.status_code == 200
                for event in sse_events(response):
                    if event["type"] == "audio_chunk":
                        break  # the caller goes away mid-answer: the connection is closed
            # The app must notice, cancel its run and close its TTS session; the endpoint ends it.
            assert wait_for(lambda: reliability_endpoint.sessions == 0, 60), (
                "the TTS session outlived the caller"
            )
            settled = engine.calls
            time.sleep(2.0)
            assert engine.calls == settled, "synthesis went on after the caller left"
            assert settled - calls_before < sentences, (
                "every sentence was synthesized for a caller who had left"
            )
        finally:
            # Leave the shared endpoint idle for the next test (bounded).
            wait_for(lambda: reliability_endpoint.sessions == 0, 180, interval_s=0.5)


def test_reliability_faults_leg1_client_vanishes_mid_answer(reliability_endpoint: Any) -> None:
    engine = reliability_endpoint.engine

    async def run() -> None:
        ws = await connect(reliability_endpoint.server.ws_url)
        for index in range(6):
            await ws.send(synthesize_frame(f"Request {index} has a few words to say.", f"gone-{index}"))
        while not isinstance(await asyncio.wait_for(ws.recv(), 240), bytes):
            pass
        ws.transport.abort()  # no close frame: the TCP connection is reset

    calls_before = engine.calls
    asyncio.run(run())
    assert wait_for(lambda: reliability_endpoint.sessions == 0, 60), reliability_endpoint.sessions
    settled = engine.calls
    time.sleep(2.0)
    assert engine.calls == settled and settled - calls_before <= 3  # pipeline_depth 2, plus the one sent


def _stalled_consumer(texts: list[str], pause_s: float) -> tuple[ToneEngine, float, float]:
    """A tone-engine endpoint; a client sends ``texts`` and reads nothing for ``pause_s``."""
    from kokoro_endpoint.app import create_app
    from kokoro_endpoint.runner import running_server
    from kokoro_endpoint.settings import Settings

    engine = ToneEngine(seconds_per_word=10.0)  # 480 kB of pcm16 per word
    app = create_app(engine=engine, settings=Settings(max_text_chars=5000))  # type: ignore[arg-type]
    with running_server(app) as server:
        gc.collect()
        before = rss_mb()

        async def run() -> float:
            async with connect(server.ws_url, max_queue=4, max_size=2**22) as ws:
                for index, text in enumerate(texts):
                    await ws.send(synthesize_frame(text, f"slow-{index}"))
                await asyncio.sleep(pause_s)
                return rss_mb() - before

        grown = asyncio.run(run())
        assert wait_for(lambda: app.state.endpoint.capacity.in_use == 0, 20)
    return engine, before, grown


def test_reliability_faults_stalled_consumer_bounds_requests_ahead(figures: dict[str, Any]) -> None:
    # 40 one-word requests (19 MB of audio) to a client that reads nothing: the session synthesizes only
    # what fits in the socket buffers plus pipeline_depth requests ahead, not the whole queue.
    engine, _before, grown = _stalled_consumer(["word"] * 40, pause_s=3.0)
    figures["stalled_consumer_requests_synthesized_of_40"] = engine.calls
    figures["stalled_consumer_rss_growth_mb"] = round(grown, 1)
    assert engine.calls <= 20, engine.calls


def test_reliability_faults_stalled_consumer_bounds_one_long_request(figures: dict[str, Any]) -> None:
    # One request of 100 words (48 MB of pcm16) to a client that reads nothing: with backpressure the
    # engine stops a few segments past what the sockets hold.
    engine, _before, grown = _stalled_consumer([" ".join(["word"] * 100)], pause_s=3.0)
    figures["stalled_consumer_segments_of_100"] = engine.segments
    figures["stalled_consumer_long_request_rss_growth_mb"] = round(grown, 1)
    assert engine.segments <= 30, engine.segments
