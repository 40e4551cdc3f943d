"""Security posture: loopback by default, a limit on every input, non-root containers, torch >= 2.10.0."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIN_TORCH = (2, 10, 0)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("+")[0])[:3])


def test_reliability_security_endpoint_binds_loopback_by_default() -> None:
    from kokoro_endpoint.cli import build_parser
    from kokoro_endpoint.serving.runner import start_server_in_thread

    assert build_parser().parse_args([]).host == "127.0.0.1"
    assert (
        start_server_in_thread.__defaults__ is not None and "127.0.0.1" in start_server_in_thread.__defaults__
    )
    # Only the container entrypoint, which must listen on the SageMaker port, widens it, explicitly.
    assert '--host "${KOKORO_HOST:-0.0.0.0}"' in (ROOT / "endpoint" / "serve").read_text()


def test_reliability_security_every_input_has_a_limit() -> None:
    from agentcore_app.payload import MAX_PROMPT_CHARS
    from kokoro_endpoint.cli import build_parser, settings_from_args
    from kokoro_endpoint.settings import Settings

    settings = settings_from_args(build_parser().parse_args([]))
    assert settings.max_text_chars == Settings().max_text_chars <= 10_000
    assert settings.max_frame_bytes <= 1024 * 1024  # WebSocket frames and POST bodies
    assert 0 < settings.max_sessions <= 256 and 0 < settings.max_pending_requests <= 1024
    assert settings.idle_timeout_s <= 3600
    # No session is held for ever: an age and a send timeout, however it keeps itself alive.
    assert 0 < settings.max_session_s <= 24 * 3600 and 0 < settings.send_timeout_s <= 600
    assert 0 < MAX_PROMPT_CHARS <= 100_000
    from agentcore_app.streaming import MAX_BODY_BYTES

    assert 0 < MAX_BODY_BYTES <= 1024 * 1024  # the app's POST bodies
    source = (ROOT / "endpoint" / "kokoro_endpoint" / "cli.py").read_text()
    assert "ws_max_size=" in source  # the protocol layer bounds frames before the app sees them
    from strands_voice_protocol.sse import SSEDecoder

    assert SSEDecoder().max_event_bytes <= 64 * 1024 * 1024  # the client side bounds what it buffers


@pytest.mark.parametrize("dockerfile", ["endpoint/Dockerfile", "examples/agentcore_app/Dockerfile"])
def test_reliability_security_containers_run_as_non_root(dockerfile: str) -> None:
    lines = [line.strip() for line in (ROOT / dockerfile).read_text().splitlines()]
    users = [line.split(None, 1)[1].strip() for line in lines if line.upper().startswith("USER ")]
    assert users, f"{dockerfile} has no USER instruction: the container would run as root"
    assert users[-1] not in {"root", "0", "0:0"}, users[-1]


def test_reliability_security_torch_at_least_2_10_0() -> None:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    torch = [package["version"] for package in lock["package"] if package["name"] == "torch"]
    assert torch and all(_version(v) >= MIN_TORCH for v in torch), torch
    # The endpoint's torch extra asks for it, and the image installs exactly the lock (no re-resolve).
    extra = tomllib.loads((ROOT / "endpoint" / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (spec,) = [dep for dep in extra["torch"] if re.match(r"torch\b", dep)]
    floor = re.search(r">=\s*([\d.]+)", spec)
    assert floor is not None and _version(floor.group(1)) >= MIN_TORCH, spec
    dockerfile = (ROOT / "endpoint" / "Dockerfile").read_text()
    assert re.search(r"uv sync[^\n]*--(frozen|locked)[^\n]*--extra torch", dockerfile), (
        "image not from uv.lock"
    )
    for pinned in re.findall(r"torch\s*[=<>~!]=?\s*([\d.]+)", dockerfile):
        assert _version(pinned) >= MIN_TORCH, pinned
