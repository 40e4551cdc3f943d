"""How long a 64 MB ``POST /invocations`` body takes to be answered, at the endpoint and at the example app.

Not a test (pytest does not collect it). Run from the repository root:

    HF_HUB_OFFLINE=1 uv run python scripts/measure_huge_body.py [NAME=TREE ...]

Each TREE is a checkout whose sources are imported (``PYTHONPATH``) by one endpoint process
(``kokoro_endpoint.cli --engine onnx``) and one app process (``python -m agentcore_app``, scripted model);
the default is this checkout. With two trees (``old=/path/to/main new=.``) the servers are asked in turn,
round after round, so a busy machine disturbs both alike. The client is urllib: it sends the whole body
before it reads the answer (no ``Expect: 100-continue``), so the figure is the time to send 64 MB plus
whatever the server makes it wait, and a server that closes while it sends shows as the error it raised.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx

ROUNDS = 5
BODY = b"x" * (64 << 20)
SOURCES = ("endpoint", "protocol", "", "examples/agentcore_app")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(kind: str, tree: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(tree / part) for part in SOURCES),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    if kind == "endpoint":
        command = [
            "-m",
            "kokoro_endpoint.cli",
            "--engine",
            "onnx",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
    else:
        command = ["-m", "agentcore_app"]
        env.update(HOST="127.0.0.1", PORT=str(port), VOICE_MODEL="scripted", CONVERSATION_STORE="none")
        env.update(TTS_ENDPOINT_URL="ws://127.0.0.1:9/x", LOG_LEVEL="WARNING")
    process = subprocess.Popen(
        [sys.executable, *command], env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the {kind} of {tree} did not start")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ping", timeout=5).status_code == 200:
                return process, port
        except httpx.TransportError:
            pass
        time.sleep(0.5)


def main(argv: list[str]) -> None:
    trees = dict(arg.split("=", 1) for arg in argv) or {"this": "."}
    servers = {
        (kind, name): _start(kind, Path(path).resolve())
        for kind in ("endpoint", "app")
        for name, path in trees.items()
    }
    times: dict[tuple[str, str], list[tuple[float, object]]] = {key: [] for key in servers}
    try:
        for _ in range(ROUNDS):
            for key, (_process, port) in servers.items():
                started = time.monotonic()
                status: object
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/invocations",
                    data=BODY,
                    headers={"Content-Type": "application/json"},
                    method="POST",
                )
                try:
                    with urllib.request.urlopen(request, timeout=120) as answer:
                        status = answer.status
                except urllib.error.HTTPError as error:
                    status = f"{error.code} {json.loads(error.read()).get('code')}"
                except (urllib.error.URLError, OSError) as error:
                    status = type(getattr(error, "reason", error)).__name__
                times[key].append((round(time.monotonic() - started, 3), status))
    finally:
        for process, _port in servers.values():
            process.terminate()
            process.wait(30)
    for (kind, name), runs in times.items():
        median = statistics.median(seconds for seconds, _status in runs)
        print(f"{kind:8} {name:6} median {median:.3f} s  runs {runs}")


if __name__ == "__main__":
    main(sys.argv[1:])
