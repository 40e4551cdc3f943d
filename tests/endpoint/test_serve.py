"""How the endpoint is started: the console script's options, `serve` (the container entry), the Dockerfile,
and /ping's 503 while the model loads."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from kokoro_endpoint.cli import build_parser, settings_from_args
from kokoro_endpoint.serving.app import create_app
from kokoro_endpoint.serving.runner import running_server
from kokoro_endpoint.settings import Settings
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ENDPOINT_DIR = Path(__file__).resolve().parents[2] / "endpoint"


def test_cli_defaults_and_options() -> None:
    args = build_parser().parse_args([])
    assert (args.host, args.port, args.engine, args.model_dir) == ("127.0.0.1", 8080, "auto", None)
    argv = "--host 0.0.0.0 --port 9000 --engine onnx --model-dir /m --max-sessions 3".split()
    args = build_parser().parse_args(argv)
    settings = settings_from_args(args)
    assert (settings.engine, str(settings.model_dir), settings.max_sessions) == ("onnx", "/m", 3)
    assert settings.clause_chars == Settings().clause_chars == 60
    assert settings_from_args(build_parser().parse_args(["--clause-chars", "0"])).clause_chars is None
    assert settings_from_args(build_parser().parse_args(["--clause-chars", "90"])).clause_chars == 90
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--engine", "tensorflow"])


def test_settings_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        Settings(max_sessions=0)
    with pytest.raises(ValueError):
        Settings(audio_frame_bytes=1001)
    with pytest.raises(ValueError):
        Settings(min_speed=2.0, max_speed=1.0)
    with pytest.raises(ValueError):
        Settings(clause_chars=0)


def test_ping_is_503_until_the_engine_is_loaded(onnx_engine: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = threading.Event()

    def slow_load(kind: str, model_dir: Any, device: str | None = None, voices: Any = None) -> Any:
        assert kind == "onnx"
        gate.wait(60)
        return onnx_engine

    monkeypatch.setattr("kokoro_endpoint.serving.state.load_engine", slow_load)
    with running_server(create_app(settings=Settings(engine="onnx"))) as server:
        assert httpx.get(f"{server.base_url}/ping").status_code == 503
        assert httpx.post(f"{server.base_url}/invocations", json={"text": "Hi."}).status_code == 503

        async def refused() -> tuple[dict[str, Any], int | None]:
            async with connect(server.ws_url) as ws:
                first = json.loads(await ws.recv())
                with pytest.raises(ConnectionClosed):
                    await ws.recv()
                return first, ws.close_code

        frame, code = asyncio.run(refused())
        assert frame["code"] == "busy" and code == 1013
        gate.set()
        deadline = time.monotonic() + 60
        while httpx.get(f"{server.base_url}/ping").status_code != 200:
            assert time.monotonic() < deadline, "never became ready"
            time.sleep(0.1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_starts_the_endpoint(tmp_path: Path) -> None:
    port = _free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "KOKORO_HOST": "127.0.0.1",
        "SAGEMAKER_BIND_TO_PORT": str(port),
        "SM_MODEL_DIR": str(tmp_path),  # no torch weights there: auto picks onnx
        "HF_HUB_OFFLINE": "1",
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [str(ENDPOINT_DIR / "serve"), "--log-level", "warning"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log_file,
        )
    try:
        deadline = time.monotonic() + 240
        status = None
        while status != 200:
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "serve never answered /ping with 200"
            try:
                status = httpx.get(f"http://127.0.0.1:{port}/ping", timeout=5).status_code
            except httpx.TransportError:
                status = None
            time.sleep(0.5)
        assert httpx.get(f"http://127.0.0.1:{port}/ping").json()["engine"] == "onnx"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal it caught.
    assert process.returncode in (0, -signal.SIGTERM), log.read_text(errors="replace")


def test_dockerfile_contract() -> None:
    dockerfile = (ENDPOINT_DIR / "Dockerfile").read_text()
    lines = [line.strip() for line in dockerfile.splitlines() if line.strip() and not line.startswith("#")]
    assert "LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true" in lines
    users = [line.split()[1] for line in lines if line.startswith("USER ")]
    assert users and users[-1] not in {"root", "0"}
    assert "EXPOSE 8080" in lines
    assert lines[-1] == 'CMD ["serve"]' and not any(line.startswith("ENTRYPOINT") for line in lines)
    assert "COPY endpoint/serve /usr/local/bin/serve" in lines
    copies = " ".join(line for line in lines if line.startswith(("COPY", "ADD")))
    assert not re.search(r"\.pth|voices/|/opt/ml/model", copies), "weights must not be baked in"
    assert "--extra torch" in dockerfile and "--frozen" in dockerfile
    pyproject = (ENDPOINT_DIR / "pyproject.toml").read_text()
    assert re.search(r'"torch>=2\.(1\d|[2-9]\d)', pyproject), "torch must be pinned >= 2.10"
    serve = (ENDPOINT_DIR / "serve").read_text()
    assert os.access(ENDPOINT_DIR / "serve", os.X_OK)
    assert "0.0.0.0" in serve and "8080" in serve and "exec kokoro-endpoint" in serve
