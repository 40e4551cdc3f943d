"""Faults: the endpoint killed mid-answer (restarted, or gone for good), a stalled byte stream, the caller
gone mid-answer, a stalled consumer. docs/reliability.md lists each with what the user hears.

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
from support.endpoint_process import EndpointProcess, free_port
from support.reliability import (
    StallingProxy,
    ToneEngine,
    assert_no_leak,
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


def _app(tts_url: str, text: str, total_s: float, silence_timeout: float = 120) -> Any:
    from agentcore_app.app import create_app
    from agentcore_app.scripted import ScriptedModel

    model = ScriptedModel(text=text, first_sentence_s=0.3, total_s=total_s)
    return create_app(tts_url=tts_url, model=model, silence_timeout=silence_timeout)


def _invoke_and_kill(
    app_url: str, endpoint: EndpointProcess, then: Any, read_s: float
) -> tuple[list[dict[str, Any]], float, int]:
    """POST /invocations; at the first audio SIGKILL the endpoint, call ``then()``; read to the end.

    Returns the events, the kill time (monotonic) and how many text deltas came after the kill.
    """
    events: list[dict[str, Any]] = []
    killed_at: float | None = None
    deltas_after_kill = 0
    with (
        httpx.Client(timeout=httpx.Timeout(10, read=read_s)) as client,
        client.stream("POST", f"{app_url}/invocations", json={"prompt": "Go"}) as response,
    ):
        assert response.status_code == 200
        for event in sse_events(response):
            events.append(event)
            if killed_at is not None and event["type"] == "text_delta":
                deltas_after_kill += 1
            if event["type"] == "audio_chunk" and killed_at is None:
                endpoint.kill()  # SIGKILL mid-answer: no close frame, the socket is reset
                killed_at = time.monotonic()
                then()
    assert killed_at is not None, "no audio arrived before the end of the answer"
    return events, killed_at, deltas_after_kill


@pytest.mark.timeout(1200)  # two endpoint process start-ups (model load and warm-up) on a shared CPU
def test_reliability_faults_endpoint_killed_mid_answer_and_restarted_speech_resumes(
    tmp_path: Path, figures: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kokoro_endpoint.serving.runner import running_server

    import strands_voice.session._driver as session_module
    from strands_voice.session._retry import RetryPolicy

    # A restarted container loads its model before it answers; on this shared 2-core machine that can
    # take minutes, so the outage allowed here is 600 s instead of the default 60 s.
    monkeypatch.setattr(session_module, "DEFAULT_RETRY", RetryPolicy(deadline_s=600.0))
    endpoint = EndpointProcess(free_port(), tmp_path / "endpoint.log")
    restart_s: list[float] = []

    def restart() -> None:
        began = time.monotonic()
        endpoint.start()  # the same port; returns once /ping answers 200
        restart_s.append(time.monotonic() - began)

    try:
        endpoint.start()
        with running_server(_app(endpoint.ws_url, ANSWER, total_s=10.0)) as app:
            events, killed_at, deltas_after_kill = _invoke_and_kill(app.base_url, endpoint, restart, 900)
            ended_after_kill = time.monotonic() - killed_at
    finally:
        endpoint.stop()
    figures["restart_endpoint_start_s"] = round(restart_s[0], 1)
    figures["restart_kill_to_agent_end_s"] = round(ended_after_kill, 1)
    figures["restart_text_deltas_after_kill"] = deltas_after_kill
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    assert "error" not in kinds, [e for e in events if e["type"] == "error"]
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == ANSWER
    # Every sentence is spoken to its end, once: the one cut by the kill resumed on the new process at the
    # sample where it stopped (skip_samples), so nothing was void and nothing is said twice.
    assert [e["sentence"] for e in events if e["type"] == "sentence_complete"] == [0, 1, 2, 3]
    assert "sentence_restart" not in kinds
    chunks = [e for e in events if e["type"] == "audio_chunk"]
    assert [c["seq"] for c in chunks] == list(range(len(chunks)))
    assert {c["sentence"] for c in chunks} == {0, 1, 2, 3}


@pytest.mark.timeout(900)
def test_reliability_faults_endpoint_stopped_for_good_text_completes_one_error(
    tmp_path: Path, figures: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kokoro_endpoint.serving.runner import running_server

    import strands_voice.session._driver as session_module
    from strands_voice.session._retry import RetryPolicy

    deadline_s = 10.0  # the default is 60 s; shorter here only to keep the suite short
    monkeypatch.setattr(session_module, "DEFAULT_RETRY", RetryPolicy(deadline_s=deadline_s))
    endpoint = EndpointProcess(free_port(), tmp_path / "endpoint.log")
    try:
        endpoint.start()
        # The text streams for 10 s, so the kill at the first audio lands while text is still coming.
        with running_server(_app(endpoint.ws_url, ANSWER, total_s=10.0)) as app:
            events, killed_at, deltas_after_kill = _invoke_and_kill(app.base_url, endpoint, lambda: None, 300)
            ended_after_kill = time.monotonic() - killed_at
            # Nothing hangs: the app has no TTS session left and answers the next caller at once with text.
            with httpx.Client(timeout=httpx.Timeout(10, read=300)) as client:
                with client.stream("POST", f"{app.base_url}/invocations", json={"prompt": "Again"}) as again:
                    assert again.status_code == 200
                    next_events = list(sse_events(again))
    finally:
        endpoint.stop()
    figures["stopped_kill_to_agent_end_s"] = round(ended_after_kill, 1)
    figures["stopped_text_deltas_after_kill"] = deltas_after_kill
    figures["stopped_retry_deadline_s"] = deadline_s
    kinds = [e["type"] for e in events]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == 1, errors  # reported once, not once per unspoken sentence
    assert errors[0]["code"] == "connection_lost" and "speech stopped" in errors[0]["message"]
    assert_no_leak(json.dumps(errors[0]))
    # The text still completes, every word once; no sentence is spoken twice.
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == ANSWER
    sentences = [e["sentence"] for e in events if e["type"] == "sentence_complete"]
    assert len(sentences) == len(set(sentences)) < 4
    # The next answer (endpoint still gone) gets its whole text and one error, and ends.
    assert "".join(e["text"] for e in next_events if e["type"] == "text_delta") == ANSWER
    assert next_events[-1]["type"] == "agent_end"
    assert [e["code"] for e in next_events if e["type"] == "error"] in (
        ["connection_failed"],
        ["connect_timeout"],
    )


@pytest.mark.timeout(900)
def test_reliability_faults_stalled_byte_stream_is_ridden_out(
    reliability_endpoint: Any, figures: dict[str, Any]
) -> None:
    """A proxy holds the endpoint's bytes for 5 s mid-answer (a congested link), then lets them go:
    no false timeout, no reconnect, the answer completes. The documented limit is the app's silence
    timeout (20 s by default): a longer stall ends speech with ``silence_timeout``."""
    from kokoro_endpoint.serving.runner import running_server

    stall_s = 5.0
    with StallingProxy(reliability_endpoint.server.port, stall_after_bytes=20_000, stall_s=stall_s) as proxy:
        app = _app(proxy.ws_url, ANSWER, total_s=1.0, silence_timeout=20)
        with (
            running_server(app) as server,
            httpx.Client(timeout=httpx.Timeout(10, read=600)) as client,
            client.stream("POST", f"{server.base_url}/invocations", json={"prompt": "Go"}) as response,
        ):
            assert response.status_code == 200
            events = list(sse_events(response))
        stalls, connections = proxy.stalls, proxy.connections
    figures["stall_s"] = stall_s
    assert stalls == 1, "the stall never happened: the answer was too short"
    assert connections == 1, "the client reconnected instead of waiting"
    kinds = [e["type"] for e in events]
    assert "error" not in kinds, [e for e in events if e["type"] == "error"]
    assert [e["sentence"] for e in events if e["type"] == "sentence_complete"] == [0, 1, 2, 3]


def test_reliability_faults_caller_disconnects_mid_answer(reliability_endpoint: Any) -> None:
    from kokoro_endpoint.serving.runner import running_server

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
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server
    from kokoro_endpoint.settings import Settings

    engine = ToneEngine(seconds_per_word=10.0)  # 480 kB of pcm16 per word
    app = create_app(engine=engine, settings=Settings(max_text_chars=5000))  # type: ignore[arg-type]
    with running_server(app) as server:
        # The endpoint measured its engine's rate at start-up (admission): those segments are not the test's.
        assert wait_for(lambda: app.state.endpoint.ready, 20)
        engine.calls = engine.segments = 0
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
