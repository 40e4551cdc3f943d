"""``strands-voice demo``: hear an agent speak while it still writes, and measure it.

The demo starts the Kokoro TTS endpoint (ONNX engine, CPU) and the example AgentCore app in-process on
loopback ports, sends one prompt through the app over real HTTP in ``bidi`` and then ``batch`` mode, reads
the Server-Sent Events incrementally, writes one WAV per mode and prints, per mode, the time to first
text, to first audio and to last audio, plus the batch/bidi ratio of time to first audio.

With ``--serve`` it starts the same two servers, prints the address of the browser page and serves until
Ctrl-C. Tests and tools start the stack with :func:`start_demo_stack`.

The demo needs the repository checkout (``uv run strands-voice demo``): the endpoint and the example app
are workspace packages, not dependencies of the library.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import errno
import itertools
import json
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from agentcore_app.models import ModelChoice, create_model, default_model_spec, parse_model_spec
from strands_voice_protocol.errors import MissingDependencyError, StrandsVoiceError

if TYPE_CHECKING:
    from kokoro_endpoint.engines import Engine
    from kokoro_endpoint.runner import RunningServer
    from strands.models import Model

__all__ = [
    "DEFAULT_PROMPT",
    "DemoError",
    "DemoReport",
    "DemoStack",
    "ModeResult",
    "Progress",
    "ProgressStep",
    "add_arguments",
    "format_report",
    "load_tts_engine",
    "report_to_json",
    "run",
    "run_demo",
    "run_mode",
    "start_demo_stack",
]

logger = logging.getLogger(__name__)

#: Asks what the built-in scripted answer happens to be about, so prompt and answer match.
DEFAULT_PROMPT: Final = "What does the Premium plan include, and how much does it cost?"
DEFAULT_OUT_DIR: Final = Path("out") / "demo"
DEFAULT_SERVE_PORT: Final = 8000
_READ_TIMEOUT_S: Final = 300.0
# The endpoint runs on this machine's CPU, next to everything else: give it time before speech is given up.
_SILENCE_TIMEOUT_S: Final = 120.0


class DemoError(StrandsVoiceError):
    """The demo could not run; the message is one line that says what to do."""


# ---------------------------------------------------------------------------------------------------------
# Progress on stderr
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ProgressStep:
    """A running progress step.

    Attributes:
        detail: A short status shown after the label while the step runs (spinner only).
    """

    detail: str = ""


class Progress:
    """Progress lines on stderr: an animated spinner on a terminal, plain lines otherwise.

    Args:
        stream: Where to write; ``sys.stderr`` by default.
        animate: Spin (True), print plain lines (False) or decide by ``stream.isatty()`` (None).
    """

    _FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: IO[str] | None = None, *, animate: bool | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._animate = self._stream.isatty() if animate is None else animate

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()

    @contextmanager
    def step(self, label: str) -> Iterator[ProgressStep]:
        """Show ``label`` while the block runs, then how long it took (or that it failed).

        The block may set ``detail`` on the yielded :class:`ProgressStep`; the spinner shows it.
        """
        started = time.monotonic()
        stop = threading.Event()
        spinner: threading.Thread | None = None
        current = ProgressStep()
        if self._animate:

            def spin() -> None:
                for frame in itertools.cycle(self._FRAMES):
                    detail = f" · {current.detail}" if current.detail else ""
                    self._write(f"\r\x1b[2K{frame} {label} {time.monotonic() - started:5.1f} s{detail}")
                    if stop.wait(0.1):
                        return

            spinner = threading.Thread(target=spin, name="demo-progress", daemon=True)
            spinner.start()
        else:
            self._write(f"{label} ...\n")
        outcome = "failed"
        try:
            yield current
            outcome = "done"
        finally:
            stop.set()
            if spinner is not None:
                spinner.join(timeout=1.0)
            elapsed = time.monotonic() - started
            mark = "✓" if outcome == "done" else "✗"
            prefix = "\r\x1b[2K" if self._animate else ""
            self._write(f"{prefix}{mark} {label}: {outcome} in {elapsed:.1f} s\n")

    def note(self, text: str) -> None:
        """Print one line."""
        self._write(f"{text}\n")


# ---------------------------------------------------------------------------------------------------------
# The servers
# ---------------------------------------------------------------------------------------------------------


def load_tts_engine() -> Engine:
    """Load and warm the Kokoro-82M int8 ONNX engine (offline, CPU).

    Raises:
        DemoError: The endpoint package or its model files are missing, or the model failed to load.
    """
    try:
        from kokoro_endpoint.engines import load_engine
    except ImportError as exc:
        raise DemoError(
            "the Kokoro endpoint package is not installed: run the demo from the repository with "
            "`uv run strands-voice demo` (uv installs it)"
        ) from exc
    try:
        engine = load_engine("onnx")
        engine.warm_up()
    except MissingDependencyError as exc:
        raise DemoError(f"the TTS endpoint failed to load: {exc}") from exc
    except Exception as exc:
        logger.debug("engine load failed", exc_info=True)
        raise DemoError(
            f"the TTS endpoint failed to load its model ({type(exc).__name__}: {exc}); "
            "run `uv sync` to reinstall the model packages"
        ) from exc
    return engine


def _quiet_agentcore_log() -> None:
    # BedrockAgentCoreApp logs every invocation at INFO through its own JSON handler (its constructor sets
    # the level); in the demo that noise would bury the figures. Debug logging (-v) keeps it.
    agentcore = logging.getLogger("bedrock_agentcore.app")
    agentcore.propagate = False  # it has its own handler; via the root every line would print twice
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        agentcore.setLevel(logging.WARNING)


def _bind_error(exc: OSError, host: str, port: int, what: str, option: str) -> DemoError:
    if exc.errno == errno.EADDRINUSE:
        return DemoError(f"port {port} on {host} is in use: pick another with {option}")
    if exc.errno == errno.EADDRNOTAVAIL:
        return DemoError(f"cannot listen on {host}: it is not an address of this machine")
    return DemoError(f"the {what} could not listen on {host}:{port}: {exc.strerror or exc}")


def _check_port(host: str, port: int, what: str, option: str) -> None:
    """Fail early, with the option to change, when a fixed port cannot be bound."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn's socket will
        try:
            probe.bind((host, port))
        except socket.gaierror as exc:
            raise DemoError(f"cannot listen on {host!r}: not a host name or address") from exc
        except OSError as exc:
            raise _bind_error(exc, host, port, what, option) from exc


def _start_server(app: Any, host: str, port: int, what: str, option: str) -> RunningServer:
    from kokoro_endpoint.runner import start_server_in_thread

    _check_port(host, port, what, option)
    try:
        return start_server_in_thread(app, host, port)
    except OSError as exc:  # lost a race for the port since the check
        raise _bind_error(exc, host, port, what, option) from exc
    except (RuntimeError, TimeoutError) as exc:
        raise DemoError(f"the {what} did not start ({exc}); rerun with -v for its log") from exc


@dataclass
class DemoStack:
    """The Kokoro endpoint and the example app, both running on loopback threads.

    Attributes:
        app_url: The app's base URL (``http://host:port``): the browser page is ``app_url + "/"``, the
            Leg 3 SSE route ``app_url + "/invocations"``.
        endpoint_url: The TTS endpoint's base URL (``http://host:port``, Leg 1).
        tts_url: The endpoint's WebSocket route, which the app speaks to.
        model: The model the app runs (see :attr:`ModelChoice.description`).
        voice: The endpoint's default voice.
    """

    app_url: str
    endpoint_url: str
    tts_url: str
    model: ModelChoice
    voice: str
    _servers: list[RunningServer] = field(repr=False, default_factory=list)

    def stop(self) -> None:
        """Stop the app, then the endpoint (idempotent)."""
        while self._servers:
            self._servers.pop().stop()


def start_demo_stack(
    model_spec: str | None,
    host: str = "127.0.0.1",
    app_port: int = 0,
    endpoint_port: int = 0,
    *,
    engine: Engine | None = None,
    model: Model | None = None,
    progress: Progress | None = None,
) -> DemoStack:
    """Start the Kokoro endpoint and the example app on ``host``.

    Args:
        model_spec: The LLM (see :mod:`agentcore_app.models`); None picks Bedrock when AWS credentials are
            configured and the scripted stand-in otherwise.
        host: Interface both servers bind.
        app_port: The app's port; 0 picks a free one.
        endpoint_port: The endpoint's port; 0 picks a free one.
        engine: An already loaded TTS engine to serve (tests share one); the ONNX engine is loaded if None.
        model: A ready Strands model, used instead of building one from ``model_spec`` (which then only
            names it).
        progress: Where to show loading progress; nothing is shown if None.

    Returns:
        The running stack; call :meth:`DemoStack.stop` when done.

    Raises:
        DemoError: A port is in use, the endpoint failed to load, or a server did not start.
        ModelSpecError: ``model_spec`` is malformed.
        MissingDependencyError: The model provider's extra is not installed.
    """
    choice = parse_model_spec(model_spec if model_spec is not None else default_model_spec())
    llm = model if model is not None else create_model(choice)
    try:
        from agentcore_app.app import create_app as create_voice_app
        from kokoro_endpoint.app import create_app as create_endpoint_app
    except ImportError as exc:
        raise DemoError(
            "the demo needs the endpoint and example app packages: run it from the repository with "
            "`uv run strands-voice demo`"
        ) from exc
    steps = progress or Progress(animate=False)
    if engine is None:
        if progress is None:
            engine = load_tts_engine()
        else:
            with steps.step("loading the Kokoro-82M TTS model (ONNX, CPU)"):
                engine = load_tts_engine()
    endpoint = _start_server(
        create_endpoint_app(engine=engine), host, endpoint_port, "TTS endpoint", "--tts-port"
    )
    try:
        app = create_voice_app(tts_url=endpoint.ws_url, model=llm, silence_timeout=_SILENCE_TIMEOUT_S)
        _quiet_agentcore_log()
        app_server = _start_server(app, host, app_port, "agent app", "--port")
    except BaseException:
        endpoint.stop()
        raise
    url_host = f"[{host}]" if ":" in host else host
    return DemoStack(
        app_url=f"http://{url_host}:{app_server.port}",
        endpoint_url=f"http://{url_host}:{endpoint.port}",
        tts_url=endpoint.ws_url,
        model=choice,
        voice=engine.default_voice,
        _servers=[endpoint, app_server],
    )


# ---------------------------------------------------------------------------------------------------------
# One mode, over real HTTP and SSE
# ---------------------------------------------------------------------------------------------------------


@dataclass
class ModeResult:
    """What one invocation did, timed at the client from the moment the request was sent.

    Attributes:
        mode: ``bidi`` or ``batch``.
        first_text_s: Seconds to the first ``text_delta``.
        first_audio_s: Seconds to the first ``audio_chunk`` (time to first audio).
        first_heard_s: Seconds to the first audible sound, played from the first chunk in real time
            (:class:`~strands_voice_tools.audio_analysis.FirstHeard`; pcm16 only).
        last_audio_s: Seconds to the last ``audio_chunk``.
        total_s: Seconds until the stream ended.
        audio_s: Seconds of audio received.
        pcm: The audio, decoded to 16-bit PCM at 24 kHz.
        text: The agent's text.
        events: How many events arrived.
        chunks: How many ``audio_chunk`` events arrived.
        errors: The ``error`` events.
        agent_end: The ``agent_end`` event (the server's own times), if it arrived.
        wav_path: Where the WAV was written.
    """

    mode: str
    first_text_s: float | None = None
    first_audio_s: float | None = None
    first_heard_s: float | None = None
    last_audio_s: float | None = None
    total_s: float = 0.0
    audio_s: float = 0.0
    pcm: bytes = field(default=b"", repr=False)
    text: str = ""
    events: int = 0
    chunks: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    agent_end: dict[str, Any] | None = None
    wav_path: Path | None = None


def run_mode(
    app_url: str,
    prompt: str,
    mode: str,
    *,
    voice: str | None = None,
    audio_format: str = "pcm16",
    read_timeout: float = _READ_TIMEOUT_S,
    on_update: Callable[[ModeResult], None] | None = None,
) -> ModeResult:
    """Send one prompt to the app's ``/invocations`` and read its SSE stream incrementally.

    Args:
        app_url: The app's base URL.
        prompt: The prompt.
        mode: ``bidi`` or ``batch``.
        voice: The TTS voice; the endpoint's default when None.
        audio_format: The audio format to ask for.
        read_timeout: Longest silence on the stream, in seconds.
        on_update: Called with the partial result after each batch of events (for progress).

    Returns:
        The timings, text and decoded audio.

    Raises:
        DemoError: The app refused the request or the connection failed.
    """
    import httpx
    from strands_voice_protocol.audio import BYTES_PER_SECOND, decode_audio
    from strands_voice_protocol.sse import SSEDecoder

    from strands_voice_tools.audio_analysis import FirstHeard

    payload: dict[str, Any] = {"prompt": prompt, "mode": mode, "format": audio_format}
    if voice is not None:
        payload["voice"] = voice
    result = ModeResult(mode=mode)
    encoded: list[bytes] = []
    texts: list[str] = []
    decoder = SSEDecoder()
    heard = FirstHeard(BYTES_PER_SECOND // 2)
    timeout = httpx.Timeout(10.0, read=read_timeout)
    started = time.perf_counter()

    def handle(event: dict[str, Any], at: float) -> None:
        result.events += 1
        kind = event.get("type")
        if kind == "text_delta":
            texts.append(str(event.get("text", "")))
            if result.first_text_s is None:
                result.first_text_s = at
        elif kind == "audio_chunk":
            try:
                encoded.append(base64.b64decode(str(event.get("data", "")), validate=True))
            except binascii.Error as exc:
                raise DemoError(f"{mode}: the app sent audio that is not base64") from exc
            result.chunks += 1
            if audio_format == "pcm16":
                result.first_heard_s = heard.feed(at, encoded[-1])
            if result.first_audio_s is None:
                result.first_audio_s = at
            result.last_audio_s = at
        elif kind == "error":
            result.errors.append(event)
        elif kind == "agent_end":
            result.agent_end = event

    try:
        with (
            httpx.Client(timeout=timeout) as client,
            client.stream("POST", f"{app_url}/invocations", json=payload) as response,
        ):
            if response.status_code != 200:
                response.read()
                try:
                    message = str(response.json().get("message", response.text))
                except (ValueError, AttributeError):
                    message = response.text[:200]
                raise DemoError(f"{mode}: the app answered HTTP {response.status_code}: {message}")
            for data in response.iter_bytes():
                at = time.perf_counter() - started
                for sse in decoder.feed(data):
                    handle(sse.json(), at)
                if on_update is not None:
                    on_update(result)
            for sse in decoder.flush():
                handle(sse.json(), time.perf_counter() - started)
    except httpx.TimeoutException as exc:
        raise DemoError(f"{mode}: the app went silent for {read_timeout:.0f} s") from exc
    except httpx.HTTPError as exc:
        raise DemoError(f"{mode}: the request to the app failed: {exc}") from exc
    result.total_s = time.perf_counter() - started
    result.text = "".join(texts)
    if encoded:
        joined = b"".join(encoded)
        result.pcm = joined if audio_format == "pcm16" else decode_audio(joined, audio_format)
        result.audio_s = len(result.pcm) / BYTES_PER_SECOND
    return result


# ---------------------------------------------------------------------------------------------------------
# The whole demo
# ---------------------------------------------------------------------------------------------------------


@dataclass
class DemoReport:
    """The demo's outcome.

    Attributes:
        prompt: The prompt sent.
        model: The model that answered.
        voice: The TTS voice.
        results: One result per mode, in the order run.
    """

    prompt: str
    model: ModelChoice
    voice: str
    results: list[ModeResult]

    def result(self, mode: str) -> ModeResult | None:
        """The result of ``mode``, if it ran."""
        return next((r for r in self.results if r.mode == mode), None)

    @property
    def ttfa_ratio(self) -> float | None:
        """Batch time to first audio divided by bidi's, when both ran and both spoke."""
        bidi, batch = self.result("bidi"), self.result("batch")
        if bidi is None or batch is None or not bidi.first_audio_s or batch.first_audio_s is None:
            return None
        return batch.first_audio_s / bidi.first_audio_s


def run_demo(
    prompt: str = DEFAULT_PROMPT,
    modes: tuple[str, ...] = ("bidi", "batch"),
    *,
    model_spec: str | None = None,
    voice: str | None = None,
    audio_format: str = "pcm16",
    out_dir: Path | None = DEFAULT_OUT_DIR,
    engine: Engine | None = None,
    progress: Progress | None = None,
) -> DemoReport:
    """Start the stack, run each mode once, write the WAVs, stop the stack.

    Args:
        prompt: The prompt to send.
        modes: The modes to run, in order.
        model_spec: The LLM; see :func:`start_demo_stack`.
        voice: The TTS voice; the endpoint's default when None.
        audio_format: The audio format the app streams (decoded back to PCM for the WAVs).
        out_dir: Where to write ``<mode>.wav``; no files when None.
        engine: An already loaded TTS engine (tests share one).
        progress: Where to show progress.

    Returns:
        The report.

    Raises:
        DemoError: Something failed; the message says what to do.
    """
    from strands_voice_protocol.audio import write_wav

    steps = progress or Progress(animate=False)
    stack = start_demo_stack(model_spec, engine=engine, progress=steps)
    try:
        results = []
        for mode in modes:
            with steps.step(f"{mode}: asking the agent and speaking its answer") as status:

                def show(partial: ModeResult, status: ProgressStep = status) -> None:
                    status.detail = f"{partial.events} events, {partial.chunks} audio chunks"

                result = run_mode(
                    stack.app_url, prompt, mode, voice=voice, audio_format=audio_format, on_update=show
                )
            if out_dir is not None and result.pcm:
                out_dir.mkdir(parents=True, exist_ok=True)
                result.wav_path = out_dir / f"{mode}.wav"
                write_wav(result.wav_path, result.pcm)
            results.append(result)
    finally:
        stack.stop()
    return DemoReport(prompt=prompt, model=stack.model, voice=voice or stack.voice, results=results)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def format_report(report: DemoReport) -> str:
    """The figures as a small table, for people."""
    lines = [
        f"model:  {report.model.description}",
        f"voice:  {report.voice} (Kokoro-82M int8 ONNX on CPU)",
        f"prompt: {report.prompt}",
        "",
        f"{'mode':<6} {'first text':>11} {'first audio':>12} {'first heard':>12} {'last audio':>11} "
        f"{'audio':>9}  wav",
    ]
    for r in report.results:
        wav = str(r.wav_path) if r.wav_path else "(none)"
        lines.append(
            f"{r.mode:<6} {_seconds(r.first_text_s):>11} {_seconds(r.first_audio_s):>12} "
            f"{_seconds(r.first_heard_s):>12} {_seconds(r.last_audio_s):>11} {_seconds(r.audio_s):>9}  {wav}"
        )
    lines.append("")
    ratio = report.ttfa_ratio
    if ratio is not None:
        bidi, batch = report.result("bidi"), report.result("batch")
        assert bidi is not None and batch is not None and bidi.first_audio_s is not None
        assert batch.first_audio_s is not None
        sooner = batch.first_audio_s - bidi.first_audio_s
        lines.append(
            f"time to first audio, batch / bidi: {ratio:.1f}x (bidi starts speaking {sooner:.2f} s sooner)"
        )
    lines.append(
        "times are measured at the client, from sending the request; first text is the first text_delta; "
        "first heard is when the first 10 ms above -40 dBFS plays, on a player starting at the first audio"
    )
    for r in report.results:
        for error in r.errors:
            lines.append(f"{r.mode}: error event {error.get('code')}: {error.get('message')}")
    if report.model.is_scripted:
        lines.append(
            "note: the answer came from the scripted stand-in, not a real LLM "
            "(use --model bedrock:<model-id>, ollama:<name> or openai:<model-id> for one)"
        )
    return "\n".join(lines)


def report_to_json(report: DemoReport) -> dict[str, Any]:
    """The figures as a JSON-ready dict (seconds)."""

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "prompt": report.prompt,
        "model": {
            "spec": report.model.spec,
            "scripted": report.model.is_scripted,
        },
        "voice": report.voice,
        "modes": {
            r.mode: {
                "first_text_s": rounded(r.first_text_s),
                "first_audio_s": rounded(r.first_audio_s),
                "first_heard_s": rounded(r.first_heard_s),
                "last_audio_s": rounded(r.last_audio_s),
                "total_s": rounded(r.total_s),
                "audio_s": rounded(r.audio_s),
                "audio_chunks": r.chunks,
                "events": r.events,
                "text_chars": len(r.text),
                "errors": r.errors,
                "server_agent_end": r.agent_end,
                "wav": str(r.wav_path) if r.wav_path else None,
            }
            for r in report.results
        },
        "ttfa_ratio_batch_over_bidi": rounded(report.ttfa_ratio),
    }


# ---------------------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` options to ``parser``."""
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, help="what to ask the agent")
    parser.add_argument(
        "--mode",
        choices=("bidi", "batch", "both"),
        default="both",
        help="which mode(s) to run (default: both)",
    )
    parser.add_argument(
        "--voice", default=None, help="TTS voice id (default: the endpoint's default, jm_kumo)"
    )
    parser.add_argument(
        "--format",
        dest="audio_format",
        choices=("pcm16", "wav", "mp3", "opus", "aac"),
        default="pcm16",
        help="audio format streamed by the app (the WAVs are decoded from it; default: pcm16)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT_DIR,
        help=f"where to write <mode>.wav (default: {DEFAULT_OUT_DIR})",
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON"
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="SPEC",
        help="bedrock:<model-id>, ollama:<name>, openai:<model-id> or scripted "
        "(default: scripted, the offline stand-in)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="start the endpoint and app, print the browser page's URL, serve until Ctrl-C",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to serve on with --serve (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_SERVE_PORT,
        help=f"app port with --serve (default: {DEFAULT_SERVE_PORT})",
    )
    parser.add_argument(
        "--tts-port", type=int, default=0, help="TTS endpoint port with --serve (default: any free)"
    )


def _serve(args: argparse.Namespace, spec: str, progress: Progress) -> int:
    stack = start_demo_stack(spec, args.host, args.port, args.tts_port, progress=progress)
    try:
        print(f"TTS endpoint: {stack.endpoint_url} (voice {stack.voice})")
        print(f"open {stack.app_url}/ in a browser; press Ctrl-C to stop", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        print("stopping", file=sys.stderr)
    finally:
        # A terminal's Ctrl-C also reaches `uv run`, which forwards it: a second SIGINT must not cut the
        # shutdown short.
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            stack.stop()
        finally:
            signal.signal(signal.SIGINT, previous)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``strands-voice demo`` with parsed arguments; returns the exit status.

    Errors are printed as one line on stderr (exit status 1); a mode that produced no audio also fails.
    """
    progress = Progress()
    try:
        # Offline and free unless asked: AWS credentials alone never switch the demo to Bedrock.
        spec = args.model if args.model is not None else "scripted"
        choice = parse_model_spec(spec)  # fail on a typo before loading anything
        if choice.is_scripted:
            progress.note(
                "model: scripted, the built-in offline stand-in LLM (a fixed answer; not a real model; "
                "--model bedrock:<model-id>, ollama:<name> or openai:<model-id> for one)"
            )
        else:
            progress.note(f"model: {choice.description}")
        if args.serve:
            return _serve(args, spec, progress)
        modes = ("bidi", "batch") if args.mode == "both" else (args.mode,)
        report = run_demo(
            args.prompt,
            modes,
            model_spec=spec,
            voice=args.voice,
            audio_format=args.audio_format,
            out_dir=args.out,
            progress=progress,
        )
    except StrandsVoiceError as error:
        print(f"strands-voice demo: error: {error}", file=sys.stderr)
        return 1
    print(format_report(report))
    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report_to_json(report), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"strands-voice demo: error: cannot write {args.json}: {error.strerror}", file=sys.stderr)
            return 1
    silent = [r.mode for r in report.results if not r.pcm]
    if silent:
        print(
            f"strands-voice demo: error: no audio in {', '.join(silent)} mode (see the error events above)",
            file=sys.stderr,
        )
        return 1
    return 0
