"""The background uvicorn runner used by tests, the demo and the benchmarks."""

from __future__ import annotations

import http.client
import socket
import urllib.request

import pytest
from kokoro_endpoint.serving.runner import running_server, start_server_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route


async def hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


APP = Starlette(routes=[Route("/", hello)])


def test_serves_on_a_free_loopback_port_and_stops() -> None:
    with running_server(APP) as server:
        assert server.host == "127.0.0.1" and server.port > 0
        assert server.ws_url.endswith(f":{server.port}/invocations-bidirectional-stream")
        with urllib.request.urlopen(server.base_url, timeout=10) as response:
            assert response.read() == b"hello"
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=2):
        pass


def test_port_in_use_raises_without_leaking_the_socket() -> None:
    # filterwarnings=error turns a leaked socket's ResourceWarning into a failure of this test.
    with running_server(APP) as server, pytest.raises(OSError):
        start_server_in_thread(APP, port=server.port)


def test_accepted_connections_send_small_frames_at_once() -> None:
    # Nagle off (TCP_NODELAY) on the server's side of each connection: with it on, a small write right after
    # another (an event, then the first audio frame) waits for the peer's delayed ACK, up to 40 ms on Linux.
    with running_server(APP) as server:
        connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
        try:
            connection.request("GET", "/")
            assert connection.getresponse().read() == b"hello"  # the connection stays open (keep-alive)
            accepted = [
                held.transport.get_extra_info("socket") for held in server._server.server_state.connections
            ]
            assert len(accepted) == 1
            assert accepted[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            connection.close()
