"""The int8 graph's convolutions as signed-weight matrix products: the same integers, faster.

The real model's audio with the rewrite is checked sample for sample against the exported whole graph in
``test_endpoint_heard.py`` (``test_split_graph_gives_the_whole_graphs_audio``): the served engine
loads the rewritten graphs wherever the CPU has VNNI, as CI's machines do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from kokoro_endpoint.engines import onnx_gemm
from kokoro_endpoint.engines.onnx_gemm import (
    conv_gemm_model,
    cpu_has_vnni,
    model_for_cpu,
    rewrite_convolutions,
)
from onnx import TensorProto, helper, numpy_helper

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


def _model(out_channels: int, in_channels: int, taps: int, dilation: int, stride: int, pads: Any) -> Any:
    """float input -> DynamicQuantizeLinear -> ConvInteger (uint8 weights) -> int32, as the export has it."""
    rng = np.random.default_rng(out_channels * 100 + taps)
    # Weights within 64 of their zero point: u8 x s8 pair sums stay inside 16 bits on any CPU's kernel, so
    # the comparison is exact with or without VNNI.
    weights = (128 + rng.integers(-64, 65, (out_channels, in_channels, taps))).astype(np.uint8)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node(
            "ConvInteger",
            ["xq", "w", "xz", "wz"],
            ["y"],
            name="conv",
            kernel_shape=[taps],
            dilations=[dilation],
            strides=[stride],
            pads=list(pads),
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, in_channels, None])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(128, np.uint8), "wz")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


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


def test_cpu_has_vnni_reads_the_flags_line(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    for flags, expected in (
        ("fpu avx2 avx512f avx512_vnni", True),
        ("fpu avx2 avx_vnni", True),
        ("fpu avx2 avx512f avx512_bf16", False),
    ):
        cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\nbugs\t\t: avx_vnni\n", encoding="utf-8")
        assert cpu_has_vnni(cpuinfo) is expected
    assert cpu_has_vnni(tmp_path / "missing") is False


def test_model_for_cpu_follows_the_setting_and_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "conv.onnx"
    onnx.save(_model(8, 16, 3, 1, 1, (1, 1)), str(source))
    cache = tmp_path / "cache"
    monkeypatch.setenv("KOKORO_ONNX_CONV_GEMM", "0")
    assert model_for_cpu(source, cache) == source
    monkeypatch.setenv("KOKORO_ONNX_CONV_GEMM", "1")
    rewritten = model_for_cpu(source, cache)
    assert rewritten.parent == cache and rewritten != source
    assert "MatMulInteger" in {node.op_type for node in onnx.load(str(rewritten)).graph.node}
    built = rewritten.stat().st_mtime_ns
    assert conv_gemm_model(source, cache) == rewritten and rewritten.stat().st_mtime_ns == built
    monkeypatch.delenv("KOKORO_ONNX_CONV_GEMM")
    for vnni, expected in ((False, source), (True, rewritten)):
        monkeypatch.setattr(onnx_gemm, "cpu_has_vnni", lambda vnni=vnni: vnni)
        assert model_for_cpu(source, cache) == expected


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


def test_the_engine_loads_each_graph_through_model_for_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from kokoro_endpoint.engines import onnx_engine

    asked: list[tuple[Path, Path]] = []

    def recording(path: Path, cache: Path | None = None) -> Path:
        chosen = model_for_cpu(path, cache)
        asked.append((path, chosen))
        return chosen

    monkeypatch.setattr(onnx_engine, "model_for_cpu", recording)
    engine = onnx_engine.OnnxEngine.load()
    assert engine.windowed
    assert [path.name for path, _ in asked] == ["encoder.onnx", "decoder.onnx"]
    # Where the CPU has VNNI (CI's machines), both run rewritten; elsewhere as exported.
    assert all((chosen != path) is cpu_has_vnni() for path, chosen in asked)
