"""A one-convolution int8 graph as Kokoro's export has it, for the convolution rewrite's tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper

#: (output channels, input channels, taps, dilation, stride, pads): the decoder's kinds of convolution.
Shape = tuple[int, int, int, int, int, tuple[int, int]]


def convolution_model(shape: Shape, *, reach: int = 64, zero: int = 128, seed: int = 0) -> Any:
    """float input -> DynamicQuantizeLinear -> ConvInteger (uint8 weights) -> int32.

    Args:
        shape: The convolution's shape.
        reach: The weights lie within this distance of their zero point.
        zero: The weights' zero point.
        seed: The weights' random seed.
    """
    out_channels, in_channels, taps, dilation, stride, pads = shape
    rng = np.random.default_rng(seed)
    weights = (zero + rng.integers(-reach, reach + 1, (out_channels, in_channels, taps))).astype(np.uint8)
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
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(zero, np.uint8), "wz")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
