"""The int8 graph's convolutions as signed-weight matrix products: the same integers, faster.

The real model's audio with the rewrite is checked sample for sample against the exported whole graph in
``test_heard.py`` (``test_split_graph_gives_the_whole_graphs_audio``, on this CPU's kernels) and in
``test_isa_kernels.py`` (on the AVX2 and AVX-512 kernels, where a pair of products is added in 16
bits with saturation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from kokoro_endpoint.engines.onnx.cpu_path import cpu_path
from kokoro_endpoint.engines.onnx.onnx_gemm import (
    conv_gemm_model,
    model_for_path,
    pairs_fit_in_16_bits,
    rewrite_convolutions,
)
from onnx import TensorProto, helper
from support.onnx_convolution import convolution_model

# (output channels, input channels, taps, dilation, stride, pads): every shape the Kokoro decoder has.
CONVOLUTIONS = (
    (8, 16, 1, 1, 1, (0, 0)),
    (8, 16, 3, 1, 1, (1, 1)),
    (8, 8, 7, 3, 1, (9, 9)),
    (8, 8, 11, 5, 1, (25, 25)),
    (4, 6, 12, 1, 6, (3, 3)),
    (1, 1, 3, 1, 2, (1, 1)),
    (6, 4, 3, 2, 1, (0, 2)),
)


def _model(
    out_channels: int, in_channels: int, taps: int, dilation: int, stride: int, pads: Any, reach: int = 64
) -> Any:
    """The export's convolution; its weights within ``reach`` of their zero point (128): at 64 no pair of
    them can leave 16 bits."""
    shape = (out_channels, in_channels, taps, dilation, stride, pads)
    return convolution_model(shape, reach=reach, seed=out_channels * 100 + taps)


def _run(model: Any, x: np.ndarray[Any, Any]) -> Any:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize("shape", CONVOLUTIONS, ids=lambda shape: "x".join(map(str, shape[:5])))
@pytest.mark.parametrize("steps", [40, 97])
def test_rewritten_convolution_gives_the_same_integers(shape: Any, steps: int) -> None:
    model = _model(*shape)
    x = np.random.default_rng(steps).standard_normal((1, shape[1], steps)).astype(np.float32)
    expected = _run(model, x)
    assert rewrite_convolutions(model) == 1
    assert [node.op_type for node in model.graph.node].count("ConvInteger") == 0
    assert {tensor.name for tensor in model.graph.initializer}.isdisjoint({"w", "wz"})  # unused: dropped
    got = _run(model, x)
    assert got.dtype == np.int32 and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_convolutions_it_cannot_express_are_left_alone() -> None:
    grouped = _model(8, 8, 3, 1, 1, (1, 1))
    grouped.graph.node[1].attribute.append(helper.make_attribute("group", 2))
    assert rewrite_convolutions(grouped) == 0
    old_opset = _model(8, 8, 3, 1, 1, (1, 1))
    old_opset.opset_import[0].version = 13  # the rewrite's Shape(start, end) needs opset 15
    assert rewrite_convolutions(old_opset) == 0
    assert [node.op_type for node in old_opset.graph.node] == ["DynamicQuantizeLinear", "ConvInteger"]


def test_pairs_that_could_leave_16_bits_are_found() -> None:
    column = np.array([[64], [64], [-64], [-64], [127], [-127]], np.int8)
    assert pairs_fit_in_16_bits(column)  # 64 + 64 on each side; a mixed pair never adds up
    assert not pairs_fit_in_16_bits(np.array([[64], [65]], np.int8))  # 255 x 129 > 32,767
    assert not pairs_fit_in_16_bits(np.array([[-64], [-65]], np.int8))
    assert pairs_fit_in_16_bits(np.array([[65], [0], [64]], np.int8))  # odd rows: the last pairs with 0
    assert not pairs_fit_in_16_bits(np.array([[0, 100], [0, 100]], np.int8))  # any column counts


def test_a_convolution_whose_pairs_could_saturate_is_left_as_exported() -> None:
    model = _model(8, 16, 3, 1, 1, (1, 1), reach=120)
    assert rewrite_convolutions(model) == 0
    assert [node.op_type for node in model.graph.node] == ["DynamicQuantizeLinear", "ConvInteger"]


def test_model_for_path_follows_the_path_and_caches(tmp_path: Path) -> None:
    source = tmp_path / "conv.onnx"
    onnx.save(_model(8, 16, 3, 1, 1, (1, 1)), str(source))
    cache = tmp_path / "cache"
    exported = cpu_path({"KOKORO_ONNX_ISA": "x86_64"})
    assert model_for_path(source, exported, cache) == source
    rewritten = model_for_path(source, cpu_path({"KOKORO_ONNX_ISA": "avx2"}), cache)
    assert rewritten.parent == cache and rewritten != source
    assert "MatMulInteger" in {node.op_type for node in onnx.load(str(rewritten)).graph.node}
    built = rewritten.stat().st_mtime_ns
    assert conv_gemm_model(source, cache) == rewritten and rewritten.stat().st_mtime_ns == built


def test_a_graph_without_convolutions_or_an_unreadable_one_is_returned_as_it_is(tmp_path: Path) -> None:
    plain = tmp_path / "plain.onnx"
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(plain))
    assert conv_gemm_model(plain, tmp_path / "cache") == plain
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    assert conv_gemm_model(broken, tmp_path / "cache") == broken
