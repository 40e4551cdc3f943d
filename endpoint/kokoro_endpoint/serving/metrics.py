"""The endpoint's CloudWatch metrics, as EMF lines on stdout (``KOKORO_METRICS=emf``; off by default).

What is measured is what the client sees on the wire, so this module needs no hook inside the sessions
or the engines: :class:`MetricsMiddleware` is an ASGI middleware that watches the frames of each Leg 1
WebSocket session and the bodies of ``POST /invocations`` and ``POST /v1/audio/speech``:

- per request, one line: ``FirstChunkLatency`` (the request's arrival to its first audio byte sent),
  ``RealTimeFactor`` (synthesis time over audio time; below 1 is faster than real time) and
  ``AudioSeconds``, under the dimension sets ``[Endpoint]`` and ``[Endpoint, Route]``;
- per interval (:func:`report_every`), one line: ``ActiveSessions``, ``SessionLimit``, ``QueuedSteps``
  (synthesis steps waiting for the model), ``Requests`` and ``Errors`` under ``[Endpoint]``, and one
  ``Errors`` line per error code under ``[Endpoint, ErrorCode]``.

Every name is listed in ``docs/observability.md``; the container's ``serve`` turns the metrics on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.emf import ENDPOINT_NAMESPACE, EmfWriter, Metric, stdout_writer, writer_from_env
from strands_voice_protocol.errors import FrameDecodeError
from strands_voice_protocol.frames import Synthesize, decode_client_message
from strands_voice_protocol.wire import BIDI_PATH

__all__ = [
    "DEFAULT_INTERVAL_S",
    "DEFAULT_NAMESPACE",
    "EndpointMetrics",
    "MetricsMiddleware",
    "SessionWatch",
    "metrics_from_env",
    "report_every",
]

logger = logging.getLogger(__name__)

#: The CloudWatch namespace of the endpoint's metrics.
DEFAULT_NAMESPACE: Final = ENDPOINT_NAMESPACE
#: Seconds between two interval lines.
DEFAULT_INTERVAL_S: Final = 60.0
#: The ``Endpoint`` dimension's value when ``KOKORO_METRICS_ENDPOINT`` is not set.
DEFAULT_ENDPOINT: Final = "kokoro-endpoint"

#: HTTP routes that synthesize, by path: the ``Route`` dimension.
_HTTP_ROUTES: Final = {"/invocations": "invocations", "/v1/audio/speech": "openai"}
_WAV_HEADER_BYTES: Final = 44
#: Arrival times a session's watch keeps per request id; a session refuses more unfinished requests.
_MAX_ARRIVALS: Final = 1024


class EndpointMetrics:
    """Counts and writes the endpoint's metrics (thread-safe).

    Args:
        writer: Where the EMF lines go (its fixed dimension: ``Endpoint``).
    """

    def __init__(self, writer: EmfWriter) -> None:
        self.writer = writer
        self._lock = threading.Lock()
        self._requests = 0
        self._errors: Counter[str] = Counter()

    def request_started(self) -> None:
        """A synthesis request arrived."""
        with self._lock:
            self._requests += 1

    def error(self, code: str) -> None:
        """An error answered a request or ended a stream."""
        with self._lock:
            self._errors[code] += 1

    def request_done(
        self, route: str, first_chunk_s: float | None, audio_s: float | None, elapsed_s: float | None
    ) -> None:
        """One line for a request answered with audio (what is unknown is left out)."""
        metrics = []
        if first_chunk_s is not None:
            metrics.append(Metric("FirstChunkLatency", "Milliseconds", round(first_chunk_s * 1000.0, 2)))
        if audio_s is not None and audio_s > 0:
            metrics.append(Metric("AudioSeconds", "Seconds", round(audio_s, 4)))
            if elapsed_s is not None:
                metrics.append(Metric("RealTimeFactor", "None", round(elapsed_s / audio_s, 4)))
        if metrics:
            dimensions = list(self.writer.dimensions)
            self.writer.emit(
                metrics,
                extra_dimensions={"Route": route},
                dimension_sets=[dimensions, [*dimensions, "Route"]],
            )

    def report(self, active_sessions: int, session_limit: int, queued_steps: int) -> None:
        """The interval's lines; the request and error counts start again from zero."""
        with self._lock:
            requests, self._requests = self._requests, 0
            errors, self._errors = self._errors, Counter()
        self.writer.emit(
            [
                Metric("ActiveSessions", "Count", active_sessions),
                Metric("SessionLimit", "Count", session_limit),
                Metric("QueuedSteps", "Count", queued_steps),
                Metric("Requests", "Count", requests),
                Metric("Errors", "Count", sum(errors.values())),
            ]
        )
        self.writer.emit_error_counts(errors)


def metrics_from_env(
    environ: Mapping[str, str] | None = None, write: Callable[[str], None] = stdout_writer
) -> EndpointMetrics | None:
    """The metrics ``KOKORO_METRICS`` asks for: ``emf`` (lines on stdout) or unset/``off`` (None).

    ``KOKORO_METRICS_NAMESPACE`` and ``KOKORO_METRICS_ENDPOINT`` (the ``Endpoint`` dimension) override
    the defaults.

    Raises:
        ConfigurationError: ``KOKORO_METRICS`` names something else.
    """
    env = os.environ if environ is None else environ
    writer = writer_from_env(env, "KOKORO", ("Endpoint", DEFAULT_ENDPOINT), DEFAULT_NAMESPACE, write)
    return None if writer is None else EndpointMetrics(writer)


class Gauges(Protocol):
    """What the interval line reads: sessions in use and their limit, synthesis steps waiting."""

    def gauges(self) -> tuple[int, int, int]:
        """``(active_sessions, session_limit, queued_steps)``."""
        ...


async def report_every(metrics: EndpointMetrics, gauges: Gauges, interval_s: float) -> None:
    """Write the interval lines every ``interval_s`` seconds until cancelled (and once more then).

    A failure to write is logged here and ends the reporting: the app only cancels this task.
    """
    try:
        while True:
            await asyncio.sleep(interval_s)
            metrics.report(*gauges.gauges())
    except asyncio.CancelledError:
        metrics.report(*gauges.gauges())
        raise
    except Exception:
        logger.exception("interval metrics failed; no more interval lines")


Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Message], Any]


class SessionWatch:
    """One WebSocket session's frames: request arrivals in, first audio byte and completions out.

    Arrival times are kept by request id until the request's answer begins or ends. A request without an
    id gets one from the session, which the watch never saw: such arrivals wait under ``""`` and each
    answer under an id the watch does not know takes the oldest of them. Every synthesize gets exactly one
    answer (a start, a cancel or an error), so what is kept is what is in flight.
    """

    def __init__(self, metrics: EndpointMetrics, max_frame_bytes: int) -> None:
        self._metrics = metrics
        self._max_frame_bytes = max_frame_bytes
        self._arrived: dict[str, deque[float]] = {}
        self._request: str | None = None  # the request whose audio is being sent
        self._started = 0.0
        self._first_byte: float | None = None

    @property
    def waiting(self) -> int:
        """Arrival times held: requests not yet answered."""
        return sum(len(arrivals) for arrivals in self._arrived.values())

    def _take(self, rid: str) -> float | None:
        """The arrival time of the request ``rid`` answers (None when the watch has none), forgotten."""
        key = rid if self._arrived.get(rid) else ""
        arrivals = self._arrived.get(key)
        if not arrivals:
            return None
        arrived = arrivals.popleft()
        if not arrivals:
            del self._arrived[key]
        return arrived

    def received(self, message: Message) -> None:
        if message.get("type") != "websocket.receive":
            return
        data = message.get("text") if message.get("text") is not None else message.get("bytes")
        if data is None or len(data) > self._max_frame_bytes:
            return  # the session refuses an oversized frame without decoding it; so do we
        try:
            decoded = decode_client_message(data)
        except FrameDecodeError:
            return  # answered with an error frame, counted when it is sent
        if isinstance(decoded, Synthesize):
            self._metrics.request_started()
            arrivals = self._arrived.setdefault(decoded.request_id or "", deque(maxlen=_MAX_ARRIVALS))
            arrivals.append(time.monotonic())

    def sent(self, message: Message) -> None:
        if message.get("type") != "websocket.send":
            return
        if message.get("bytes") is not None:
            if self._request is not None and self._first_byte is None:
                self._first_byte = time.monotonic()
            return
        text = message.get("text")
        if text is None:
            return
        frame = json.loads(text)
        kind = frame.get("type")
        rid = str(frame.get("request_id") or "")
        if kind == "synthesis_start":
            arrived = self._take(rid)
            self._started = time.monotonic() if arrived is None else arrived
            self._request, self._first_byte = rid, None
        elif kind == "synthesis_complete":
            first = None if self._first_byte is None else self._first_byte - self._started
            self._metrics.request_done("bidi", first, frame.get("total_duration_s"), frame.get("elapsed_s"))
            self._request = None
        elif kind in ("synthesis_cancelled", "error"):
            if kind == "error":
                self._metrics.error(str(frame.get("code", "unknown")))
            if rid and self._request == rid:
                self._request = None
            else:
                self._take(rid)  # answered before it started


class _HttpWatch:
    """One HTTP synthesis request's response: status, first audio byte, audio length, errors."""

    def __init__(self, metrics: EndpointMetrics, route: str) -> None:
        self._metrics = metrics
        self._route = route
        self._arrived = time.monotonic()
        self._status = 200
        self._sse = False
        self._pcm_bytes_per_byte: float | None = None  # pcm16: 1; wav: 1 after its header; else unknown
        self._header = 0
        self._first: float | None = None
        self._bytes = 0
        self._audio_s: float | None = None
        self._error_body = bytearray()
        self.errored = False
        metrics.request_started()

    def sent(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._status = int(message["status"])
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])
            }
            content_type = headers.get("content-type", "")
            self._sse = content_type.startswith("text/event-stream")
            if content_type.startswith(("audio/L16", "audio/pcm")):
                self._pcm_bytes_per_byte = 1.0
            elif content_type.startswith("audio/wav"):
                self._pcm_bytes_per_byte, self._header = 1.0, _WAV_HEADER_BYTES
        elif message["type"] == "http.response.body":
            body: bytes = message.get("body", b"")
            if self._status >= 400:
                self._error_body.extend(body)
            elif body:
                self._body(body)
            if not message.get("more_body", False):
                self._done()

    def _body(self, body: bytes) -> None:
        if self._sse:
            if self._first is None and (b'"audio_chunk"' in body or b'"speech.audio.delta"' in body):
                self._first = time.monotonic()
            if b'"synthesis_complete"' in body or b'"error"' in body:
                for line in body.split(b"\n"):
                    if line.startswith(b"data:"):
                        self._sse_event(json.loads(line[5:]))
        else:
            if self._first is None:
                self._first = time.monotonic()
            self._bytes += len(body)

    def _sse_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "synthesis_complete":
            self._audio_s = event.get("total_duration_s")
        elif event.get("type") == "error":
            error = event.get("error")
            self.fail(str(error.get("code") if isinstance(error, dict) else event.get("code", "unknown")))

    def fail(self, code: str) -> None:
        if not self.errored:
            self.errored = True
            self._metrics.error(code)

    def _done(self) -> None:
        if self._status >= 400:
            self.fail(_error_code(bytes(self._error_body), self._status))
            return
        if self.errored:
            return
        audio_s = self._audio_s
        if audio_s is None and self._pcm_bytes_per_byte is not None:
            audio_s = max(0, self._bytes - self._header) / BYTES_PER_SECOND
        first = None if self._first is None else self._first - self._arrived
        self._metrics.request_done(self._route, first, audio_s, time.monotonic() - self._arrived)


def _error_code(body: bytes, status: int) -> str:
    """The code of an error body: a Leg 1 error frame's ``code``, OpenAI's ``error.code``, else the status."""
    try:
        decoded = json.loads(body)
    except ValueError:
        return f"http_{status}"
    if isinstance(decoded, dict):
        error = decoded.get("error")
        code = error.get("code") if isinstance(error, dict) else decoded.get("code")
        if code:
            return str(code)
    return f"http_{status}"


class MetricsMiddleware:
    """ASGI middleware: the metrics of the synthesis routes, from what they send and receive.

    Args:
        app: The wrapped ASGI app.
        metrics: Where the figures go.
        max_frame_bytes: Client frames larger than this are not read (the session refuses them).
    """

    def __init__(self, app: Any, metrics: EndpointMetrics, max_frame_bytes: int) -> None:
        self.app = app
        self.metrics = metrics
        self.max_frame_bytes = max_frame_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope.get("path") == BIDI_PATH:
            bidi = SessionWatch(self.metrics, self.max_frame_bytes)

            async def receive_bidi() -> Message:
                message: Message = await receive()
                _safely(bidi.received, message)
                return message

            async def send_bidi(message: Message) -> None:
                _safely(bidi.sent, message)
                await send(message)

            await self.app(scope, receive_bidi, send_bidi)
            return
        route = _HTTP_ROUTES.get(scope.get("path", "")) if scope["type"] == "http" else None
        if route is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        http = _HttpWatch(self.metrics, route)

        async def send_http(message: Message) -> None:
            _safely(http.sent, message)
            await send(message)

        try:
            await self.app(scope, receive, send_http)
        except Exception:
            http.fail("internal")  # the body ended early: the only signal a streaming client gets
            raise


def _safely(watch: Callable[[Message], None], message: Message) -> None:
    """Metrics must never break a session."""
    try:
        watch(message)
    except Exception:
        logger.exception("metrics: could not read a message")
