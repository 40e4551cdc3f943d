"""Two settings of the ONNX engine side by side: the engine's first step and speed.

Not a test (pytest does not collect it). Run from the repository root:

    HF_HUB_OFFLINE=1 uv run python scripts/measure_engine_options.py {spinning,conv-gemm} [rounds]

- ``spinning``: onnxruntime's idle pool threads spinning (``KOKORO_ONNX_SPINNING=1``) against sleeping.
- ``conv-gemm``: the export's ``ConvInteger`` convolutions (``KOKORO_ONNX_CONV_GEMM=0``) against their
  rewrite as u8 x s8 matrix products (``=1``, :mod:`kokoro_endpoint.engines.onnx.onnx_gemm`).

Two ONNX engines in one process, identical but for that setting, each warmed up. Round by round, their
order switched each round, with a 1 s pause before every request (a listener's request comes after a
pause, not right after the last one): the time to the first piece of ``stream`` for the 44- and
197-character bench sentences, and every other round the whole of a two-sentence answer, as engine time
over audio time (the real-time factor). Prints each configuration's trials and medians.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine
from strands_voice_tools.bench.engine_probe import engine_first_segment_ms
from strands_voice_tools.bench.texts import HEARD_LONG, HEARD_SHORT

ANSWER = (
    "The old lighthouse keeper climbed the narrow spiral stairs every evening. "
    "He lit the great lamp that guided the fishing boats home."
)
PAUSE_S = 1.0
FIRST_STEPS = (("44 chars, first step ms", HEARD_SHORT), ("197 chars, first step ms", HEARD_LONG))
#: Each comparison: the environment variable and its two values, named (the default's value last).
OPTIONS = {
    "spinning": ("KOKORO_ONNX_SPINNING", (("spinning", "1"), ("sleeping (default)", "0"))),
    "conv-gemm": (
        "KOKORO_ONNX_CONV_GEMM",
        (("ConvInteger", "0"), ("u8 x s8 matmul (default with VNNI)", "1")),
    ),
}


def real_time_factor(engine: Any, text: str) -> float:
    started = time.perf_counter()
    samples = sum(len(piece.audio) for piece in engine.stream(text, engine.default_voice, 1.0))
    return (time.perf_counter() - started) / (samples / engine.sample_rate)


def main(option: str, rounds: int) -> None:
    variable, settings = OPTIONS[option]
    engines: dict[str, Any] = {}
    for name, value in settings:
        os.environ[variable] = value
        engines[name] = OnnxEngine.load()
        engines[name].warm_up()
    results: dict[tuple[str, str], list[float]] = {}
    for index in range(rounds):
        order = list(engines) if index % 2 == 0 else list(engines)[::-1]
        for name in order:
            for label, text in FIRST_STEPS:
                time.sleep(PAUSE_S)
                (first_step,) = engine_first_segment_ms(
                    engines[name], text, voice=engines[name].default_voice, trials=1, warmups=0
                )
                results.setdefault((name, label), []).append(first_step)
            if index % 2 == 0:
                time.sleep(PAUSE_S)
                results.setdefault((name, "answer real-time factor"), []).append(
                    real_time_factor(engines[name], ANSWER)
                )
    print(f"load average {os.getloadavg()}, {rounds} rounds")
    for (name, label), values in results.items():
        trials = ", ".join(f"{value:.3g}" for value in sorted(values))
        print(f"{name:34} {label:26} median {statistics.median(values):.3g}  ({trials})")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12)
