"""``agent-infra demo``: bidi versus batch speech against a running voice agent, timed from the client.

The app answers ``{"prompt", "mode"}`` with Server-Sent Events (PROTOCOL.md, Leg 3). For each mode the
demo sends the same prompt, reads the stream as it arrives and records when the first text and the first
audio reached the client, next to the times the server reports in ``agent_end``. The app is reached
either at a URL (``POST {url}/invocations``, e.g. the container on localhost:8080) or, deployed, through
``bedrock-agentcore``'s ``InvokeAgentRuntime``.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import statistics
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "MODES",
    "ModeResult",
    "SSEParser",
    "format_results",
    "local_stream",
    "run_demo",
    "run_mode",
    "runtime_stream",
]

logger = logging.getLogger(__name__)

MODES: tuple[str, ...] = ("bidi", "batch")

#: Opens one request: takes the JSON payload, yields the response body as it arrives.
StreamOpener = Callable[[dict[str, Any]], Iterator[bytes]]


class SSEParser:
    """Incremental Server-Sent Events reader: feed bytes as they come, get whole JSON events back.

    Events are split on the blank line, never on transport chunks; ``data:`` lines of one event are joined
    with newlines; comments, ids and non-JSON data are skipped.
    """

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Add ``chunk`` and return every event it completed."""
        buffer = self._buffer + chunk
        held = b""
        if buffer.endswith(b"\r"):  # maybe half of a CRLF: decide once the next byte is here
            buffer, held = buffer[:-1], b"\r"
        buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        events: list[dict[str, Any]] = []
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            data = [line[5:] for line in block.split(b"\n") if line.startswith(b"data:")]
            payload = b"\n".join(d[1:] if d.startswith(b" ") else d for d in data)
            if not payload:
                continue
            try:
                event = json.loads(payload)
            except ValueError:
                logger.debug("data=<%r> | skipped a non-JSON event", payload[:80])
                continue
            if isinstance(event, dict):
                events.append(event)
        self._buffer = buffer + held
        return events


@dataclass
class ModeResult:
    """One run of one mode.

    Attributes:
        mode: ``bidi`` or ``batch``.
        first_text_ms: Client-side time from sending the request to the first ``text_delta``.
        first_audio_ms: Client-side time to the first ``audio_chunk`` (time to first audio).
        total_ms: Client-side time to the end of the stream.
        server_ttfa_ms: ``agent_end.ttfa_ms``, the server's own time to first audio.
        server_text_ms: ``agent_end.text_ms``.
        server_audio_ms: ``agent_end.audio_ms``.
        audio_chunks: Number of ``audio_chunk`` events.
        audio_bytes: Decoded audio bytes.
        errors: ``error`` events, as ``code: message``.
    """

    mode: str
    first_text_ms: float | None = None
    first_audio_ms: float | None = None
    total_ms: float = 0.0
    server_ttfa_ms: float | None = None
    server_text_ms: float | None = None
    server_audio_ms: float | None = None
    audio_chunks: int = 0
    audio_bytes: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def run_mode(
    open_stream: StreamOpener,
    prompt: str,
    mode: str,
    *,
    voice: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> ModeResult:
    """Send ``prompt`` in ``mode`` and time the events as they arrive.

    Args:
        open_stream: Opens the request and yields the body.
        prompt: The user's words.
        mode: ``bidi`` or ``batch``.
        voice: A voice name, or the app's default.
        clock: Monotonic seconds (tests).

    Returns:
        The timings and counts.
    """
    payload: dict[str, Any] = {"prompt": prompt, "mode": mode}
    if voice:
        payload["voice"] = voice
    result = ModeResult(mode=mode)
    parser = SSEParser()
    started = clock()
    for chunk in open_stream(payload):
        now_ms = (clock() - started) * 1000.0
        for event in parser.feed(chunk):
            kind = event.get("type")
            if kind == "text_delta" and result.first_text_ms is None:
                result.first_text_ms = now_ms
            elif kind == "audio_chunk":
                if result.first_audio_ms is None:
                    result.first_audio_ms = now_ms
                result.audio_chunks += 1
                try:
                    result.audio_bytes += len(base64.b64decode(event.get("data", ""), validate=True))
                except (binascii.Error, ValueError, TypeError):
                    result.errors.append("client: undecodable audio chunk")
            elif kind == "agent_end":
                result.server_ttfa_ms = _number(event.get("ttfa_ms"))
                result.server_text_ms = _number(event.get("text_ms"))
                result.server_audio_ms = _number(event.get("audio_ms"))
            elif kind == "error":
                result.errors.append(f"{event.get('code', 'error')}: {event.get('message', '')}")
    result.total_ms = (clock() - started) * 1000.0
    logger.debug("mode=<%s>, first_audio_ms=<%s> | run finished", mode, result.first_audio_ms)
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


def _ms(value: float | None) -> str:
    return f"{value:7.0f} ms" if value is not None else "      n/a"


def format_run(result: ModeResult) -> str:
    """One line for one run."""
    server = _ms(result.server_ttfa_ms).strip()
    line = (
        f"{result.mode:<6} first audio {_ms(result.first_audio_ms)} (server {server})"
        f" | first text {_ms(result.first_text_ms)} | done {_ms(result.total_ms)}"
        f" | {result.audio_chunks} audio chunks, {result.audio_bytes} bytes"
    )
    return line + (f" | errors: {'; '.join(result.errors)}" if result.errors else "")


def format_results(results: Iterable[ModeResult]) -> list[str]:
    """The summary: median time to first audio per mode, and how much sooner the fastest mode speaks."""
    by_mode: dict[str, list[float]] = {}
    for result in results:
        if result.first_audio_ms is not None:
            by_mode.setdefault(result.mode, []).append(result.first_audio_ms)
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
