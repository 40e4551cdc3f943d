"""``agent-infra demo``: bidi versus batch speech against a running voice agent, timed from the client.

The app answers ``{"prompt", "mode"}`` with Server-Sent Events (PROTOCOL.md, Leg 3). For each mode the
demo sends the same prompt, reads the stream as it arrives and records when the first text and the first
audio reached the client, next to the times the server reports in ``agent_end``. The app is reached
either at a URL (``POST {url}/invocations``, e.g. the container on localhost:8080) or, deployed, through
``bedrock-agentcore``'s ``InvokeAgentRuntime``.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from strands_voice_protocol.leg3_client import Leg3Recorder, ModeResult, record_stream

__all__ = [
    "MODES",
    "format_results",
    "format_run",
    "local_stream",
    "run_demo",
    "run_mode",
    "runtime_stream",
]

logger = logging.getLogger(__name__)

MODES: tuple[str, ...] = ("bidi", "batch")

#: Opens one request: takes the JSON payload, yields the response body as it arrives.
StreamOpener = Callable[[dict[str, Any]], Iterator[bytes]]


def run_mode(
    open_stream: StreamOpener,
    prompt: str,
    mode: str,
    *,
    voice: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> ModeResult:
    """Send ``prompt`` in ``mode`` and record the events as they arrive (the one Leg 3 client).

    Args:
        open_stream: Opens the request and yields the body.
        prompt: The user's words.
        mode: ``bidi`` or ``batch``.
        voice: A voice name, or the app's default.
        clock: Monotonic seconds (tests).

    Returns:
        The run; client times in seconds from sending the request.
    """
    payload: dict[str, Any] = {"prompt": prompt, "mode": mode}
    if voice:
        payload["voice"] = voice
    started = clock()
    result = record_stream(open_stream(payload), Leg3Recorder(mode), started=started, clock=clock)
    logger.debug("mode=<%s>, first_audio_s=<%s> | run finished", mode, result.first_audio_s)
    return result


def run_demo(
    open_stream: StreamOpener,
    prompt: str,
    *,
    modes: Sequence[str] = MODES,
    repeat: int = 1,
    voice: str | None = None,
    on_result: Callable[[ModeResult], None] | None = None,
) -> list[ModeResult]:
    """Run every mode ``repeat`` times, alternating modes so that warm-up favours neither.

    Args:
        open_stream: Opens one request.
        prompt: The user's words.
        modes: The modes to compare.
        repeat: Runs per mode.
        voice: A voice name, or the app's default.
        on_result: Called after each run (progress output).

    Returns:
        Every run, in the order made.
    """
    results = []
    for _ in range(max(1, repeat)):
        for mode in modes:
            result = run_mode(open_stream, prompt, mode, voice=voice)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def _ms(seconds: float | None) -> str:
    return f"{seconds * 1000.0:7.0f} ms" if seconds is not None else "      n/a"


def format_run(result: ModeResult) -> str:
    """One line for one run (times in milliseconds, for people)."""
    server = result.server_ttfa_ms
    server_text = f"{server:.0f} ms" if server is not None else "n/a"
    line = (
        f"{result.mode:<6} first audio {_ms(result.first_audio_s)} (server {server_text})"
        f" | first text {_ms(result.first_text_s)} | done {_ms(result.total_s)}"
        f" | {len(result.audio)} audio chunks, {result.audio_bytes} bytes"
    )
    errors = result.error_lines
    return line + (f" | errors: {'; '.join(errors)}" if errors else "")


def format_results(results: Iterable[ModeResult]) -> list[str]:
    """The summary: median time to first audio per mode, and how much sooner the fastest mode speaks."""
    by_mode: dict[str, list[float]] = {}
    for result in results:
        if result.first_audio_s is not None:
            by_mode.setdefault(result.mode, []).append(result.first_audio_s * 1000.0)
    medians = {mode: statistics.median(values) for mode, values in by_mode.items()}
    lines = [
        f"time to first audio, {mode}: {value:.0f} ms (median of {len(by_mode[mode])})"
        for mode, value in medians.items()
    ]
    if "bidi" in medians and "batch" in medians:
        gap = medians["batch"] - medians["bidi"]
        faster, slower = ("bidi", "batch") if gap >= 0 else ("batch", "bidi")
        lines.append(f"{faster} speaks {abs(gap):.0f} ms sooner than {slower}")
    if not medians:
        lines.append("no audio arrived in any mode")
    return lines


def local_stream(url: str, *, timeout: float = 120.0) -> StreamOpener:
    """An opener for an app at ``url`` (``http://host:port``; ``/invocations`` is added if missing)."""
    target = url.rstrip("/")
    if not target.endswith("/invocations"):
        target += "/invocations"

    def open_stream(payload: dict[str, Any]) -> Iterator[bytes]:
        request = urllib.request.Request(
            target,
            data=json.dumps(payload).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            while chunk := response.read1(65536):
                yield chunk

    return open_stream


def runtime_stream(
    client: Any, runtime_arn: str, *, session_id: str | None = None, qualifier: str | None = None
) -> StreamOpener:
    """An opener for a deployed AgentCore runtime through ``bedrock-agentcore``'s ``InvokeAgentRuntime``.

    All requests share one runtime session (one warm microVM), so modes are compared on equal terms.

    Args:
        client: A boto3 ``bedrock-agentcore`` client.
        runtime_arn: The runtime's ARN.
        session_id: The runtime session (33+ characters); a new one when ``None``.
        qualifier: The runtime endpoint (``DEFAULT`` when ``None``).
    """
    session = session_id or f"strands-voice-demo-{uuid.uuid4().hex}"

    def open_stream(payload: dict[str, Any]) -> Iterator[bytes]:
        kwargs: dict[str, Any] = {
            "agentRuntimeArn": runtime_arn,
            "runtimeSessionId": session,
            "payload": json.dumps(payload).encode(),
            "contentType": "application/json",
            "accept": "text/event-stream",
        }
        if qualifier:
            kwargs["qualifier"] = qualifier
        body = client.invoke_agent_runtime(**kwargs)["response"]
        raw = getattr(body, "_raw_stream", None)
        try:
            if raw is not None and hasattr(raw, "read1"):
                while chunk := raw.read1(65536):
                    yield chunk
            else:
                yield from body.iter_chunks(1024)
        finally:
            body.close()

    return open_stream
