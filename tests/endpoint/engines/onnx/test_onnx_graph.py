"""The derived ONNX model with the duration output: written once, cached by hash, original as fallback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from kokoro_endpoint.engines.onnx.onnx_graph import DURATION_TENSOR, model_with_durations


def _model(path: Path, inner: str) -> Path:
    """x → Round → ``inner`` → Neg → y: a tiny graph whose middle tensor is named like Kokoro's."""
    helper = onnx.helper
    graph = helper.make_graph(
        [
            helper.make_node("Round", ["x"], [inner]),
            helper.make_node("Neg", [inner], ["y"]),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_the_duration_tensor_becomes_a_second_output(tmp_path: Path) -> None:
    source = _model(tmp_path / "model.onnx", DURATION_TENSOR)
    derived = model_with_durations(source, cache=tmp_path / "cache")
    assert derived != source and derived.parent == tmp_path / "cache"
    session = ort.InferenceSession(str(derived), providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == ["y", DURATION_TENSOR]
    y, durations = session.run(None, {"x": np.array([1.2, 2.7, 0.4], dtype=np.float32)})
    assert durations.tolist() == [1.0, 3.0, 0.0] and y.tolist() == [-1.0, -3.0, -0.0]
    # Cached: the second call reuses the file.
    written = derived.stat().st_mtime_ns
    assert model_with_durations(source, cache=tmp_path / "cache") == derived
    assert derived.stat().st_mtime_ns == written


def test_a_graph_without_the_tensor_is_used_as_it_is(tmp_path: Path) -> None:
    source = _model(tmp_path / "model.onnx", "/other/tensor")
    assert model_with_durations(source, cache=tmp_path / "cache") == source


def test_an_unreadable_model_falls_back_to_the_original(tmp_path: Path) -> None:
    source = tmp_path / "broken.onnx"
    source.write_bytes(b"not a model")
    assert model_with_durations(source, cache=tmp_path / "cache") == source
