"""The demo's stack: the Kokoro TTS endpoint (ONNX engine, CPU) and the example app, on loopback threads.

Tests and tools (the bench, the browser tests) start the stack with :func:`start_demo_stack`. The endpoint
and the example app are workspace packages, so this needs the repository checkout (``uv run ...``).
"""

from __future__ import annotations

import errno
import logging
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from agentcore_app.models import ModelChoice, create_model, default_model_spec, parse_model_spec
from strands_voice_protocol.errors import MissingDependencyError

from strands_voice_tools.demo.errors import DemoError
from strands_voice_tools.demo.progress import Progress

if TYPE_CHECKING:
    from kokoro_endpoint.engines.interface import Engine
    from kokoro_endpoint.serving.runner import RunningServer
    from strands.models import Model

__all__ = ["DemoStack", "load_tts_engine", "start_demo_stack"]

logger = logging.getLogger(__name__)

# The endpoint runs on this machine's CPU, next to everything else: give it time before speech is given up.
_SILENCE_TIMEOUT_S: Final = 120.0


def load_tts_engine() -> Engine:
    """Load and warm the Kokoro-82M int8 ONNX engine (offline, CPU).

    Raises:
        DemoError: The endpoint package or its model files are missing, or the model failed to load.
    """
    try:
        from kokoro_endpoint.engines.loader import load_engine
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
    from kokoro_endpoint.serving.runner import start_server_in_thread

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
        from agentcore_app.conversation import ConversationStore
        from kokoro_endpoint.serving.app import create_app as create_endpoint_app
    except ImportError as exc:
        raise DemoError(
            "the demo needs the endpoint and example app packages: run it from the repository with "
            "`uv run strands-voice demo`"
        ) from exc
    engine = engine if engine is not None else _load_engine(progress)
    endpoint = _start_server(
        create_endpoint_app(engine=engine), host, endpoint_port, "TTS endpoint", "--tts-port"
    )
    try:
        # Conversations in memory only: the demo leaves nothing on disk.
        app = create_voice_app(
            tts_url=endpoint.ws_url,
            model=llm,
            silence_timeout=_SILENCE_TIMEOUT_S,
            conversation_store=ConversationStore(kind="none"),
        )
        _quiet_agentcore_log()
        app_server = _start_server(app, host, app_port, "agent app", "--port")
    except BaseException:
        endpoint.stop()
        raise
    return _demo_stack(host, endpoint, app_server, choice, engine.default_voice)


def _demo_stack(
    host: str, endpoint: RunningServer, app_server: RunningServer, choice: ModelChoice, voice: str
) -> DemoStack:
    """The running stack's URLs (an IPv6 host in brackets), model and voice."""
    url_host = f"[{host}]" if ":" in host else host
    return DemoStack(
        app_url=f"http://{url_host}:{app_server.port}",
        endpoint_url=f"http://{url_host}:{endpoint.port}",
        tts_url=endpoint.ws_url,
        model=choice,
        voice=voice,
        _servers=[endpoint, app_server],
    )


def _load_engine(progress: Progress | None) -> Engine:
    """Load the ONNX engine, as a progress step when there is progress to show."""
    if progress is None:
        return load_tts_engine()
    with progress.step("loading the Kokoro-82M TTS model (ONNX, CPU)"):
        return load_tts_engine()
