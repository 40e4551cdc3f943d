"""What judging a pause costs: the recognizer's words, then Smart Turn and the end pitch, per Smart Turn
thread count.

Not a test (pytest does not collect it). Run from the repository root (the ``listen`` group):

    HF_HUB_OFFLINE=1 uv run python scripts/measure_pause_judgment.py 1 2

The bench's three finished questions in the endpoint's three voices, each with 0.3 s of silence before it
and 64 ms after (the audio the listener judges a pause on), go through what the listener runs at a pause,
one after another as it does: ``WhisperRecognizer.recognize``, then ``SmartTurn.probability`` and
``final_fall``. The thread counts given are alternated turn by turn; the median of each step over 5
rounds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict


def main(thread_counts: list[int]) -> None:
    import numpy as np
    from strands_voice_tools.bench.turn_set import QUESTIONS, VOICES, spoken
    from strands_voice_tools.demo import load_tts_engine

    from strands_voice.listen import SmartTurn, WhisperRecognizer, final_fall

    engine = load_tts_engine()
    lead, tail = bytes(2 * 4800), bytes(2 * 1024)
    turns = [lead + spoken(engine, text, voice) + tail for voice in VOICES for text in QUESTIONS]
    recognizer = WhisperRecognizer()
    recognizer.transcribe(bytes(32000))
    models = {threads: SmartTurn(threads=threads) for threads in thread_counts}
    times: dict[str, list[float]] = defaultdict(list)
    for _round in range(5):
        for pcm16 in turns:
            audio = np.frombuffer(pcm16, dtype=np.int16).astype(np.float32) / 32768.0
            started = time.perf_counter()
            recognizer.recognize(pcm16)
            times["words"].append(time.perf_counter() - started)
            for threads, model in models.items():
                started = time.perf_counter()
                model.probability(audio)
                times[f"Smart Turn, {threads} thread(s)"].append(time.perf_counter() - started)
            started = time.perf_counter()
            final_fall(audio)
            times["end pitch"].append(time.perf_counter() - started)
    for step, taken in times.items():
        print(f"{step:26s} median {1000 * statistics.median(taken):6.1f} ms  ({len(taken)} turns)")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1, 2])
