"""Run an ASGI app with uvicorn on a background thread: for tests, the demo and benchmarks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from strands_voice_protocol.wire import BIDI_PATH

__all__ = ["RunningServer", "running_server", "start_server_in_thread"]

logger = logging.getLogger(__name__)


@dataclass
class RunningServer:
    """A uvicorn server running on a daemon thread.

    Attributes:
        host: The bound host.
        port: The bound port (the real one when 0 was asked for).
    """

    host: str
    port: int
    _server: uvicorn.Server = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    @property
    def base_url(self) -> str:
        """``http://host:port``."""
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        """The Leg 1 bidirectional route, ``ws://host:port/invocations-bidirectional-stream``."""
        return f"ws://{self.host}:{self.port}{BIDI_PATH}"

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to shut down and wait for the thread to end."""
        self._server.should_exit = True
        self._thread.join(timeout)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout)


def start_server_in_thread(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    startup_timeout: float = 60.0,
    log_level: str = "warning",
    **uvicorn_options: Any,
) -> RunningServer:
    """Start ``app`` under uvicorn on a daemon thread and wait until it accepts connections.

    Args:
        app: The ASGI application.
        host: Interface to bind; loopback by default.
        port: Port to bind; 0 picks a free one.
        startup_timeout: Seconds to wait for the server to start.
        log_level: uvicorn's log level.
        **uvicorn_options: Passed to ``uvicorn.Config``.

    Returns:
        The running server, with the port it actually bound.
    """
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only on accepted sockets that say TCP, and
    # they inherit the listener's. With Nagle on, a small frame sent right after another (an event, then the
    # first audio) waits for the peer's delayed ACK: up to 40 ms on Linux.
    sock = socket.socket(
        socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP
    )
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level=log_level, lifespan="on", **uvicorn_options)
    server = uvicorn.Server(config)

    def serve() -> None:
        asyncio.run(server.serve(sockets=[sock]))

    thread = threading.Thread(target=serve, name=f"uvicorn-{bound_port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive():
            sock.close()
            raise RuntimeError("the server stopped while starting; see its log")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise TimeoutError(f"server did not start within {startup_timeout} s")
        time.sleep(0.02)
    logger.debug("host=<%s>, port=<%d> | server started", host, bound_port)
    return RunningServer(host=host, port=bound_port, _server=server, _thread=thread)


@contextlib.contextmanager
def running_server(
    app: Any, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> Iterator[RunningServer]:
    """Context manager form of :func:`start_server_in_thread`; stops the server on exit."""
    server = start_server_in_thread(app, host, port, **options)
    try:
        yield server
    finally:
        server.stop()
