"""Silero VAD: every call's VAD shares one onnxruntime session (the model in memory once), and two calls fed
at once, frame by frame from several threads, hear exactly what each would hear alone."""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt
from optional_groups import require


def _frames(seed: int, count: int = 60) -> list[npt.NDArray[np.float32]]:
    """Noise bursts and quiet, so the probabilities move (the state matters)."""
    rng = np.random.default_rng(seed)
    frames = []
    for index in range(count):
        level = 0.5 if (index // 10) % 2 else 0.01
        frames.append((level * rng.standard_normal(512)).astype(np.float32))
    return frames


def test_vads_share_one_session_and_keep_their_own_state() -> None:
    require("onnxruntime", "listen")
    require("faster_whisper", "listen")
    from strands_voice.listen import SileroVad

    streams = [_frames(seed) for seed in range(4)]
    alone = []
    for frames in streams:
        vad = SileroVad()
        alone.append([vad.probability(frame) for frame in frames])

    vads = [SileroVad() for _ in streams]
    assert len({id(vad._session) for vad in vads}) == 1  # one model in memory
    together: list[list[float]] = [[] for _ in streams]

    def run(index: int) -> None:
        for frame in streams[index]:
            together[index].append(vads[index].probability(frame))

    threads = [threading.Thread(target=run, args=(index,)) for index in range(len(streams))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert together == alone
