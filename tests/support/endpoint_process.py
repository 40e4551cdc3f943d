"""A real endpoint process for the tests that kill it (tests/reliability, tests/strands_voice): ``python -m
kokoro_endpoint.cli --engine onnx`` on 127.0.0.1, started, SIGKILLed and restarted on the same port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

__all__ = ["EndpointProcess", "free_port"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EndpointProcess:
    """``python -m kokoro_endpoint.cli --engine onnx`` on 127.0.0.1:<port>, as its own process."""

    def __init__(self, port: int, log_path: Path, env: Mapping[str, str] | None = None) -> None:
        self.port = port
        self.log_path = log_path
        self.env = dict(env or {})
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/invocations-bidirectional-stream"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, ready_timeout_s: float = 300.0) -> None:
        """Start the process and wait (bounded) until ``/ping`` answers 200."""
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", **self.env}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kokoro_endpoint.cli",
                    "--engine",
                    "onnx",
                    "--port",
                    str(self.port),
                    "--log-level",
                    "warning",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + ready_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the endpoint exited with {self.proc.returncode}; see {self.log_path}")
            try:
                if httpx.get(f"{self.base_url}/ping", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        self.stop()
        raise TimeoutError(f"the endpoint was not ready within {ready_timeout_s} s")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no close frames, sockets reset by the kernel."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        """Terminate (then kill) if still running."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
