"""Echo cancellation without devices: the speakers' timeline, the reference each microphone frame gets, and
WebRTC's AEC3 removing a delayed echo from blocks whose times jitter as PortAudio's do."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from optional_groups import require

from strands_voice.devices._echo import HEADROOM_S, EchoCanceller
from strands_voice.devices._timeline import PlayedAudio, Timeline

SPEAKERS_RATE = 24_000
MIC_RATE = 16_000

Frame = npt.NDArray[np.int16]


def test_jittered_and_wild_block_times_leave_the_stream_contiguous() -> None:
    timeline = Timeline(MIC_RATE)
    times = [10.0, 10.021, 10.038, 10.36, 10.081, 10.1]  # 20 ms blocks, jittered; one 300 ms off
    starts = [timeline.place(320, at) for at in times]
    assert starts == [0, 320, 640, 960, 1280, 1600]
    assert timeline.restarts == 0 and timeline.time_of(1600) == pytest.approx(10.1)


def test_a_reported_underrun_skips_the_gap_by_the_blocks_time() -> None:
    timeline = Timeline(MIC_RATE)
    timeline.place(320, 10.0)
    assert timeline.place(320, 10.5, missed=True) == 8000  # 480 ms of nothing, then the device goes on
    assert timeline.gaps == 7680 and timeline.time_of(8000) == pytest.approx(10.5)


def test_blocks_that_agree_on_another_time_move_the_clock() -> None:
    """A stream whose first times were wrong (or that lost samples without saying so): once ``window``
    blocks in a row agree on a time 200 ms later, the clock follows them; the count goes on."""
    timeline = Timeline(MIC_RATE, window=4)
    timeline.place(320, 10.0)
    starts = [timeline.place(320, 10.22 + 0.02 * block) for block in range(5)]
    assert starts == [320, 640, 960, 1280, 1600]
    assert timeline.restarts == 1 and timeline.time_of(1600) == pytest.approx(10.3)


def test_played_audio_is_read_at_the_time_it_was_heard() -> None:
    played = PlayedAudio(SPEAKERS_RATE)
    ramp = np.arange(24_000, dtype=np.int16)  # one second, sample i has value i
    for offset in range(0, len(ramp), 480):
        played.write(ramp[offset : offset + 480].tobytes(), 5.0 + offset / SPEAKERS_RATE)
    half_second = played.read(5.5, 160, MIC_RATE)
    assert half_second == pytest.approx(12_000 + 1.5 * np.arange(160))  # 24 kHz read at 16 kHz
    assert not played.read(4.0, 160, MIC_RATE).any()  # before anything played: silence
    assert not played.read(6.5, 160, MIC_RATE).any()  # after: silence


def test_a_gap_in_the_speakers_stream_reads_as_silence() -> None:
    played = PlayedAudio(SPEAKERS_RATE)
    tone = np.full(2_400, 1_000, dtype=np.int16)
    played.write(tone.tobytes(), 1.0)
    played.write(tone.tobytes(), 1.5, missed=True)  # an underrun: 0.4 s after the first block ended
    assert played.timeline.gaps == 0.4 * SPEAKERS_RATE
    assert played.read(1.2, 160, MIC_RATE).max() == 0
    assert played.read(1.5, 160, MIC_RATE).min() == 1_000


class RecordingProcessor:
    """Stands in for WebRTC's processor: keeps the frames it was given, returns the near one."""

    def __init__(self) -> None:
        self.pairs: list[tuple[Frame, Frame | None]] = []
        self.resets: list[int] = []  # the number of frames processed before each reset

    def reset(self) -> None:
        self.resets.append(len(self.pairs))

    def process(
        self, near: npt.NDArray[np.int16], far: npt.NDArray[np.int16] | None
    ) -> npt.NDArray[np.int16]:
        self.pairs.append((near.copy(), None if far is None else far.copy()))
        return near


def test_each_frame_gets_what_was_played_headroom_after_its_capture() -> None:
    played = PlayedAudio(SPEAKERS_RATE)
    ramp = (np.arange(48_000) % 20_000).astype(np.int16)
    for offset in range(0, len(ramp), 600):
        played.write(ramp[offset : offset + 600].tobytes(), 100.0 + offset / SPEAKERS_RATE)
    processor = RecordingProcessor()
    canceller = EchoCanceller(played, processor=processor)
    microphone = np.arange(8_100, dtype=np.int16)
    cleaned = b""
    for offset in range(0, len(microphone), 333):  # blocks that are not whole frames
        cleaned += canceller.process(microphone[offset : offset + 333].tobytes(), 100.2 + offset / MIC_RATE)
    assert cleaned == microphone[: len(cleaned) // 2].tobytes()  # whole frames, in order
    assert len(cleaned) // 2 == 8_000  # 100 samples wait for the rest of their frame
    for index, (near, far) in enumerate(processor.pairs):
        assert near.tolist() == list(range(160 * index, 160 * index + 160))
        expected = played.read(100.2 + index * 0.01 + HEADROOM_S, 160, MIC_RATE)
        assert far is not None and far.tolist() == np.rint(expected).astype(np.int16).tolist()


def test_a_frame_waits_for_its_reference_to_be_written() -> None:
    """The speakers' callback runs late: the microphone's frames wait for it, at most ``max_wait_s``."""
    played = PlayedAudio(SPEAKERS_RATE)
    played.write(bytes(2 * 2_400), 10.0)  # heard until 10.1
    canceller = EchoCanceller(played, processor=RecordingProcessor(), headroom_s=0.045, max_wait_s=0.195)

    def frames(samples: int, at: float) -> int:
        return len(canceller.process(bytes(2 * samples), at)) // (2 * 160)

    assert frames(480, 10.0) == 3  # references until 10.085: written
    assert frames(480, 10.03) == 2  # the frame at 10.05 needs until 10.105: it waits
    played.write(bytes(2 * 2_400), 10.1)  # heard until 10.2
    assert frames(160, 10.06) == 2
    assert frames(3_200, 10.07) == 8  # to the frame at 10.14; the later ones wait
    assert frames(3_200, 10.27) == 13  # the microphone is 0.2 s on: they wait no longer


def _room(canceller: EchoCanceller, level: int, seconds: float, stall_at: float) -> npt.NDArray[np.int16]:
    """20 ms blocks from time 10: the speakers play ``level`` (each block written 0.2 s before it is heard),
    the microphone hears 1000 all along; at ``stall_at`` the speakers underrun for 0.3 s (the process
    stalled). What the canceller lets through."""
    assert canceller.played is not None
    speakers, microphone = np.full(480, level, np.int16).tobytes(), np.full(320, 1_000, np.int16).tobytes()
    heard_at, cleaned = 10.0, []
    for n in range(round(seconds / 0.02)):
        now = 10.0 + n * 0.02
        while heard_at < now + 0.2:
            missed = abs(heard_at - stall_at) < 0.001
            heard_at += 0.3 if missed else 0.0
            canceller.played.write(speakers, heard_at, missed)
            heard_at += 0.02
        cleaned.append(canceller.process(microphone, now))
    return np.frombuffer(b"".join(cleaned), dtype="<i2")


def test_a_moved_echo_path_silences_the_frames_while_aec3_finds_it_again() -> None:
    """An underrun moves the speakers' clock while they sound: AEC3 is reset, the next 0.5 s of the
    microphone is silence, then it is heard again; AEC3 still gets every frame."""
    processor = RecordingProcessor()
    canceller = EchoCanceller(PlayedAudio(SPEAKERS_RATE), processor=processor, settle_s=0.5)
    out = _room(canceller, 5_000, 2.5, stall_at=11.0)
    silent = np.flatnonzero(out == 0)
    assert len(silent) == 0.5 * MIC_RATE and canceller.silenced == 50
    assert silent[0] == 0.8 * MIC_RATE  # from when the block after the underrun was written (0.2 s ahead)
    assert np.all(np.diff(silent) == 1) and len(processor.pairs) == len(out) // 160
    assert processor.resets == [80]  # AEC3 starts afresh on the moved path


def test_a_clock_that_moves_while_the_speakers_are_silent_silences_nothing() -> None:
    processor = RecordingProcessor()
    canceller = EchoCanceller(PlayedAudio(SPEAKERS_RATE), processor=processor, settle_s=0.5)
    assert np.all(_room(canceller, 0, 2.5, stall_at=11.0) == 1_000) and canceller.silenced == 0
    assert processor.resets == []


def test_without_speakers_the_frames_get_no_reference() -> None:
    processor = RecordingProcessor()
    canceller = EchoCanceller(None, processor=processor)
    canceller.process(bytes(640), 1.0)
    assert [far for _, far in processor.pairs] == [None, None]


def _speech_16k(engine: Any, text: str) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16]]:
    """``text`` spoken by the endpoint's engine: at 24 kHz (the speakers') and at 16 kHz (the room's)."""
    from strands_voice_protocol.audio import float32_to_pcm16
    from support.spoken import speak_16k

    audio = np.concatenate(list(engine.synthesize(text, "jm_kumo", 1.0)))
    at_24k = np.frombuffer(float32_to_pcm16(audio), dtype="<i2")
    return at_24k, np.frombuffer(speak_16k(engine, text), dtype="<i2")


def _level_db(samples: npt.NDArray[Any]) -> float:
    return float(10 * np.log10(np.mean(samples.astype(np.float64) ** 2) + 1e-9))


def test_aec3_removes_a_delayed_echo_and_keeps_the_caller(onnx_engine: Any) -> None:
    """The speakers' blocks and the microphone's arrive with jittered times (as PortAudio's callbacks do);
    the echo comes 40 ms after the sound, at half its level. Once AEC3 has converged (2 s), the echo alone is
    more than 30 dB down, while a caller speaking over it keeps most of their level."""
    require("pywebrtc_audio", "speakers")
    answer_24k, answer_16k = _speech_16k(
        onnx_engine, "Bicycles are a wonderful way to get around a city, quiet and cheap and good for you."
    )
    _, caller = _speech_16k(onnx_engine, "What does it cost?")
    played = PlayedAudio(SPEAKERS_RATE)
    canceller = EchoCanceller(played)
    rng = np.random.default_rng(7)
    echo = np.concatenate([np.zeros(640, np.int16), (answer_16k // 2).astype(np.int16)])[: len(answer_16k)]
    caller_at = 16_000 * 3
    room = echo.astype(np.int32)
    room[caller_at : caller_at + len(caller)] += caller[: len(room) - caller_at]
    room16 = np.clip(room, -32768, 32767).astype(np.int16)
    cleaned = bytearray()
    ahead = 16_000 // 5  # the speakers' blocks leave for the device 200 ms before they are heard
    for block in range(-ahead, len(room16) - 320, 320):  # 20 ms blocks
        heard = block + ahead
        sound = answer_24k[heard * 3 // 2 : (heard + 320) * 3 // 2]
        played.write(sound.tobytes(), heard / 16_000 + rng.normal(0, 0.004))
        if block >= 0:
            captured = room16[block : block + 320].tobytes()
            cleaned += canceller.process(captured, block / 16_000 + rng.normal(0, 0.004))
    out = np.frombuffer(bytes(cleaned), dtype="<i2")
    echo_only = slice(16_000 * 2, caller_at)
    assert _level_db(echo[echo_only]) - _level_db(out[echo_only]) > 30
    during_caller = slice(caller_at, caller_at + len(caller))
    assert _level_db(out[during_caller]) > _level_db(caller) - 10


def test_without_pywebrtc_audio_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from strands_voice_protocol.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "pywebrtc_audio", None)  # import pywebrtc_audio raises ImportError
    with pytest.raises(MissingDependencyError, match=r"pywebrtc_audio.*uv sync --group speakers"):
        EchoCanceller(PlayedAudio(SPEAKERS_RATE))
