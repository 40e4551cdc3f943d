"""``Speakers`` for real: an answer from the real endpoint played into a PulseAudio null sink.

The sink's monitor is recorded while ``Speakers`` plays (default output device: the only sink), then every
chunk the handler delivered is found in the recording, in order (chunk by chunk, so a pause where the
CPU fell behind real time does not matter), and Whisper hears the answer in it. The handler's
``interrupted`` event stops the sound at once. Needs ``uv sync --group speakers`` and ``apt-get install
pulseaudio pulseaudio-utils libportaudio2`` (Whisper: ``--group asr``); skips without them, fails under CI.
"""

from __future__ import annotations

import base64
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from agentcore_app.scripted import ScriptedModel
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from strands import Agent
from strands_voice_protocol.audio import pcm16_to_float32
from support.pulse import PulseServer, null_sink_server, portaudio_on
from support.whisper import whisper_input

from strands_voice import Speakers, VoiceCallbackHandler, VoiceOptions

pytestmark = pytest.mark.timeout(280)

ANSWER = "Please close the kitchen window. I would like a glass of cold water, thank you."
RATE = 24_000
#: The piece of the answer looked for in the recording (0.1 s).
BLOCK = 2_400
#: The device's buffer: the test process also runs the endpoint, and the CPU is shared, so PortAudio's
#: thread may wait a while for its turn (a shorter buffer underruns: gaps in the sound).
LATENCY_S = 0.5


@pytest.fixture(scope="module")
def pulse() -> Iterator[PulseServer]:
    """A private PulseAudio null sink, which PortAudio (re-initialized) sees as its default output."""
    with null_sink_server() as server, portaudio_on(server):
        yield server


@dataclass
class Played:
    """What the handler delivered (in chunks) and what the sink's monitor recorded meanwhile."""

    chunks: list[npt.NDArray[np.int16]]
    recorded: npt.NDArray[np.int16]
    events: list[dict[str, Any]]


class Tap:
    """An ``on_event`` that keeps the events and the delivered chunks, and hands each to the speakers."""

    def __init__(self, speakers: Speakers) -> None:
        self.speakers = speakers
        self.events: list[dict[str, Any]] = []
        self.chunks: list[npt.NDArray[np.int16]] = []
        self.lock = threading.Lock()

    def __call__(self, event: Any) -> None:
        with self.lock:
            self.events.append(dict(event))
            if event["type"] == "audio_chunk":
                self.chunks.append(np.frombuffer(base64.b64decode(event["data"]), dtype="<i2"))
        self.speakers(event)


def _speak(server: RunningServer, tap: Tap, text: str) -> VoiceCallbackHandler:
    voice = VoiceCallbackHandler(server.ws_url, options=VoiceOptions(voice="jm_kumo"), on_event=tap)
    agent = Agent(model=ScriptedModel(text=text, first_sentence_s=0.0, total_s=0.2), callback_handler=voice)
    agent("Tell me about bicycles.")
    return voice


@pytest.fixture(scope="module")
def played(
    pulse: PulseServer, endpoint_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Played:
    recording = pulse.record(tmp_path_factory.mktemp("monitor") / "monitor.raw")
    with Speakers(latency=LATENCY_S) as speakers:
        tap = Tap(speakers)
        voice = _speak(endpoint_server, tap, ANSWER)
        assert voice.wait(timeout=200)
        voice.close()
        assert speakers.wait(timeout=60)
        time.sleep(0.3)  # the monitor's own latency
    return Played(tap.chunks, recording.stop(), tap.events)


def _locate(block: npt.NDArray[np.int16], recorded: npt.NDArray[np.int16], start: int) -> tuple[int, float]:
    """Where ``block`` best matches ``recorded[start:]`` and that match's correlation (normalized
    cross-correlation: each candidate window divided by its own energy, so a loud passage is no better)."""
    a, b = block.astype(np.float64), recorded[start:].astype(np.float64)
    if len(b) < len(a):
        return start, 0.0
    size = 1 << int(np.ceil(np.log2(len(a) + len(b))))
    dots = np.fft.irfft(np.fft.rfft(b, size) * np.conj(np.fft.rfft(a, size)), size)[: len(b) - len(a) + 1]
    energy = np.concatenate([[0.0], np.cumsum(b * b)])
    window_norms = np.sqrt(np.maximum(energy[len(a) :] - energy[: len(b) - len(a) + 1], 1e-9))
    lag = int(np.argmax(dots / window_norms))
    return start + lag, float(np.corrcoef(a, b[lag : lag + len(a)])[0, 1])


def test_the_delivered_audio_is_in_the_recording_in_order(played: Played) -> None:
    """Each tenth of a second of the answer is found, in order, as it was sent (the monitor records the
    samples played: correlation near 1). Where the shared CPU fell behind real time the device played
    silence (an underrun) between or inside blocks: a block cut by one is allowed, one in ten at most."""
    answer = np.concatenate(played.chunks)
    assert len(answer) > RATE  # over a second of answer
    position, matched, cut = 0, 0, []
    for start in range(0, len(answer) - BLOCK + 1, BLOCK):
        block = answer[start : start + BLOCK]
        if np.abs(block).max() < 1_000:  # silence matches anywhere
            continue
        at, correlation = _locate(block, played.recorded, position)
        if correlation > 0.9:
            matched, position = matched + 1, at + BLOCK
        else:
            cut.append((start, round(correlation, 3)))
    assert matched >= 10 and len(cut) <= matched // 10, f"{matched} blocks found in order; not found: {cut}"


def test_whisper_hears_the_answer_in_the_recording(played: Played, whisper_model: Any) -> None:
    jiwer = require("jiwer", "asr")
    audio = whisper_input(pcm16_to_float32(played.recorded.tobytes()), lead_in_s=0.3)
    segments, _info = whisper_model.transcribe(audio, language="en", beam_size=1)
    heard = " ".join(segment.text for segment in segments)
    print(f"WER: heard {heard!r}")
    words = " ".join(re.findall(r"[a-z']+", ANSWER.lower()))
    error_rate = jiwer.wer(words, " ".join(re.findall(r"[a-z']+", heard.lower())))
    assert error_rate <= 0.25, f"WER {error_rate:.2f}: heard {heard!r}"


def test_an_interrupted_event_silences_the_speakers_at_once(
    pulse: PulseServer, played: Played, tmp_path: Path
) -> None:
    """The answer's audio queued whole, then the handler's ``interrupted`` event half a second in."""
    answer = np.concatenate(played.chunks)
    recording = pulse.record(tmp_path / "monitor.raw")
    with Speakers(latency=LATENCY_S) as speakers:
        speakers({"type": "audio_start", "format": "pcm16", "sample_rate": RATE, "channels": 1})
        speakers({"type": "audio_chunk", "data": base64.b64encode(answer.tobytes()).decode()})
        time.sleep(0.5)
        speakers({"type": "interrupted", "heard_text": ""})
        assert speakers.queued_s == 0
        stopped_at = len(recording.samples())
        time.sleep(LATENCY_S + 1.0)
    recorded = recording.stop()
    assert int(np.abs(recorded[:stopped_at]).max()) > 1_000, "the answer's start was not played"
    after = recorded[stopped_at + int((LATENCY_S + 0.3) * RATE) :]  # the device's, the monitor's latency
    assert len(after) > RATE // 4 and int(np.abs(after).max()) < 100, "sound went on after the interrupt"
    assert len(answer) > 2 * RATE  # so most of it was dropped, not played out


def test_a_missing_device_is_named(pulse: PulseServer) -> None:
    from strands_voice_protocol.errors import ConfigurationError

    with pytest.raises(
        ConfigurationError, match=r"no output device 'no-such-card'.*output devices here: .*pulse"
    ):
        Speakers("no-such-card")
    assert os.environ["PULSE_SERVER"] == pulse.address
