"""The int8 graph's convolutions as signed-weight matrix products: the same integers, on faster kernels.

The export quantizes each convolution dynamically: the activations to uint8 on every call
(``DynamicQuantizeLinear``), the weights to uint8 once, multiplied by ``ConvInteger``. onnxruntime's CPU
``ConvInteger`` multiplies uint8 by uint8, and on every x86-64 CPU with AVX2 MLAS's u8 x s8 kernel is the
faster one (:mod:`.cpu_path` has the kernels per instruction set). :func:`rewrite_convolutions` turns each
``ConvInteger`` into the same product in matrix form:

- the quantized activations, time-major (``Transpose``), padded with their zero point (``Pad``);
- the kernel's taps gathered side by side (``Gather``: im2col, one row of ``taps x channels`` per output
  step);
- ``MatMulInteger`` against the weights re-encoded as int8 around their zero point (``w - zero``, zero
  point 0: the same differences, so the same int32 sums), then back to channel-major (``Transpose``).

Without VNNI, MLAS's u8 x s8 kernel (``vpmaddubsw``) adds the products of weight rows ``2p`` and
``2p + 1`` in 16 bits with saturation. A convolution is rewritten only when no such pair can leave 16 bits
for any uint8 activations: the weights of each pair, per output channel, sum to at most 128 on each side
of zero (255 x 128 fits in 16 bits). The export's weights use 7 bits (0..127), so around their zero point
every convolution passes but the decoder's two 1-channel ones (3 taps each, left as exported). The output
is then the ``ConvInteger``'s int32 tensor exactly on every kernel, and the graph after it is unchanged, so
the audio is the same, sample for sample (``tests/endpoint/engines/onnx/test_onnx_gemm.py``, also run on the
AVX2 kernels).

The rewritten graph is written once into the endpoint's cache folder, keyed by its source's sha256.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from kokoro_endpoint.engines.onnx.onnx_graph import cache_dir, save_model, sha256_of

if TYPE_CHECKING:
    from kokoro_endpoint.engines.onnx.cpu_path import CpuPath

__all__ = ["conv_gemm_model", "model_for_path", "pairs_fit_in_16_bits", "rewrite_convolutions"]

logger = logging.getLogger(__name__)

#: "2": weights around their own zero point, pairs checked ("1": ``w - 128``, unchecked, VNNI only).
_REWRITE_VERSION: Final = "2"
#: The largest sum of one sign's weights in a pair: 255 x 128 = 32,640 fits in a signed 16-bit sum.
_PAIR_LIMIT: Final = 32767 // 255


def model_for_path(model_file: Path, path: CpuPath, cache: Path | None = None) -> Path:
    """The graph to load on ``path``'s CPU: ``model_file`` with its convolutions rewritten, or as it is."""
    return conv_gemm_model(model_file, cache) if path.conv_gemm else model_file


def pairs_fit_in_16_bits(matrix: np.ndarray[Any, Any]) -> bool:
    """Whether MLAS's 16-bit pair sums of ``matrix`` (int8 weights, ``(rows, columns)``) are exact.

    Rows ``2p`` and ``2p + 1`` are multiplied by two uint8 activations and added in 16 bits with
    saturation; the sum is exact for every activation when, per column, the pair's positive weights sum to
    at most 128 and so do its negative ones.
    """
    weights = np.asarray(matrix, dtype=np.int32)
    if len(weights) % 2:
        weights = np.concatenate([weights, np.zeros((1, *weights.shape[1:]), np.int32)])
    positive, negative = np.clip(weights, 0, None), np.clip(-weights, 0, None)
    return bool(
        (positive[0::2] + positive[1::2]).max(initial=0) <= _PAIR_LIMIT
        and (negative[0::2] + negative[1::2]).max(initial=0) <= _PAIR_LIMIT
    )


def conv_gemm_model(model_file: Path, cache: Path | None = None) -> Path:
    """A cached copy of ``model_file`` with its convolutions rewritten, else ``model_file`` itself.

    Args:
        model_file: An ONNX graph with dynamically quantized convolutions.
        cache: Folder for the rewritten graph; ``onnx_graph.cache_dir()`` by default.

    Returns:
        The rewritten graph's path (written on first use), or ``model_file`` when it has nothing to rewrite
        or the copy cannot be written (it runs as exported: the same audio, slower).
    """
    try:
        folder = cache or cache_dir()
        derived = folder / f"{model_file.stem}.gemm-v{_REWRITE_VERSION}.{sha256_of(model_file)[:16]}.onnx"
        if derived.is_file():
            return derived
        import onnx

        model = onnx.load(str(model_file))
        if rewrite_convolutions(model) == 0:
            return model_file
        save_model(model, derived)
    except Exception:
        logger.warning("model=<%s> | convolutions not rewritten; the graph runs as exported", model_file.name)
        return model_file
    logger.info("model=<%s> | convolutions rewritten as signed-weight matrix products", derived.name)
    return derived


def rewrite_convolutions(model: Any) -> int:
    """Rewrite ``model``'s (an ``onnx.ModelProto``) 1-D ``ConvInteger`` nodes with constant uint8 weights.

    Returns:
        How many were rewritten. Grouped convolutions, ``auto_pad``, non-constant weights or weight zero
        points, weights whose pairs could leave 16 bits (:func:`pairs_fit_in_16_bits`), and graphs below
        opset 15 (``Shape`` with ``start``/``end``) are left as they are.
    """
    if not any(entry.domain in ("", "ai.onnx") and entry.version >= 15 for entry in model.opset_import):
        return 0
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    nodes: list[Any] = []
    added: list[Any] = []
    replaced: set[str] = set()
    for node in graph.node:
        signed = _signed_weights(node, constants)
        if signed is None:
            nodes.append(node)
            continue
        new_nodes, new_constants = _as_matmul(node, *signed)
        nodes.extend(new_nodes)
        added.extend(new_constants)
        replaced.update(node.input[1::2])  # the weights and their zero point
    if replaced:
        del graph.node[:]
        graph.node.extend(nodes)
        graph.initializer.extend(added)
        # The uint8 weights no other node reads are dropped (a zero point can be shared).
        unused = replaced - _names_read(graph)
        kept = [tensor for tensor in graph.initializer if tensor.name not in unused]
        del graph.initializer[:]
        graph.initializer.extend(kept)
    return len(replaced) // 2


def _signed_weights(node: Any, constants: dict[str, Any]) -> tuple[np.ndarray[Any, Any], int] | None:
    """A ``ConvInteger``'s weights as the int8 matrix of :func:`_as_matmul` and its taps, or None where the
    node is not rewritten.

    Row ``(tap, input channel)`` holds the weights of every output channel, less their zero point: the same
    differences, so the same products.
    """
    from onnx import numpy_helper

    if node.op_type != "ConvInteger" or len(node.input) < 4:
        return None
    weights, zero = constants.get(node.input[1]), constants.get(node.input[3])
    if weights is None or zero is None or not _plain(node, weights.dims):
        return None
    w, w_zero = numpy_helper.to_array(weights), numpy_helper.to_array(zero)
    if w.dtype != np.uint8 or w_zero.size != 1:
        return None
    centred = w.astype(np.int16) - int(w_zero.reshape(-1)[0])
    if centred.min() < -128 or centred.max() > 127:
        return None
    out_channels, in_channels, taps = w.shape
    matrix = centred.astype(np.int8).transpose(2, 1, 0).reshape(taps * in_channels, out_channels)
    return (np.ascontiguousarray(matrix), taps) if pairs_fit_in_16_bits(matrix) else None


def _names_read(graph: Any) -> set[str]:
    """Every tensor name that ``graph``'s nodes (subgraphs included) or outputs read."""
    from onnx import AttributeProto

    names = {output.name for output in graph.output}
    for node in graph.node:
        names.update(node.input)
        for attribute in node.attribute:
            if attribute.type == AttributeProto.GRAPH:
                names |= _names_read(attribute.g)
            elif attribute.type == AttributeProto.GRAPHS:
                for subgraph in attribute.graphs:
                    names |= _names_read(subgraph)
    return names


def _attributes(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}


def _plain(node: Any, weight_dims: Any) -> bool:
    """A 1-D convolution, one group, explicit pads (what :func:`_as_matmul` handles)."""
    attributes = _attributes(node)
    auto_pad = attributes.get("auto_pad", b"NOTSET")
    return (
        len(weight_dims) == 3
        and attributes.get("group", 1) == 1
        and auto_pad in (b"NOTSET", "NOTSET")
        and len(attributes.get("pads", [0, 0])) == 2
    )


def _as_matmul(node: Any, matrix: np.ndarray[Any, Any], taps: int) -> tuple[list[Any], list[Any]]:
    """The nodes and constants that compute ``node``'s int32 output as a ``MatMulInteger`` by ``matrix``
    (:func:`_signed_weights`: ``(taps x input channels, output channels)``, zero point 0)."""
    from onnx import helper, numpy_helper

    attributes = _attributes(node)
    in_channels = matrix.shape[0] // taps
    (dilation,) = (int(value) for value in attributes.get("dilations", [1]))
    (stride,) = (int(value) for value in attributes.get("strides", [1]))
    pad_start, pad_end = (int(pad) for pad in attributes.get("pads", [0, 0]))
    activations, activation_zero = node.input[0], node.input[2]
    prefix = f"{node.name or node.output[0]}/gemm"

    def name(part: str) -> str:
        return f"{prefix}/{part}"

    constants = [
        numpy_helper.from_array(matrix, name("weights")),
        numpy_helper.from_array(np.array(0, dtype=np.int8), name("weights_zero")),
    ]
    nodes = [helper.make_node("Transpose", [activations], [name("time_major")], perm=[0, 2, 1])]
    current = name("time_major")
    if pad_start or pad_end:
        pads = np.array([0, pad_start, 0, 0, pad_end, 0], np.int64)  # (batch, time, channel) starts, ends
        constants.append(numpy_helper.from_array(pads, name("pads")))
        nodes.append(helper.make_node("Pad", [current, name("pads"), activation_zero], [name("padded")]))
        current = name("padded")
    if taps > 1 or stride > 1:
        unfolded = _unfold(prefix, current, (taps, in_channels), dilation, stride)
        nodes, constants, current = nodes + unfolded[0], constants + unfolded[1], unfolded[2]
    nodes += [
        helper.make_node(
            "MatMulInteger",
            [current, name("weights"), activation_zero, name("weights_zero")],
            [name("product")],
        ),
        helper.make_node("Transpose", [name("product")], [node.output[0]], perm=[0, 2, 1]),
    ]
    for index, new_node in enumerate(nodes):
        new_node.name = f"{prefix}/{index}"
    return nodes, constants


def _unfold(
    prefix: str, source: str, shape: tuple[int, int], dilation: int, stride: int
) -> tuple[list[Any], list[Any], str]:
    """The nodes and constants that gather each output step's ``(taps, in_channels)`` into one row.

    Output step t reads padded steps t * stride + tap * dilation: one Gather of a (steps, taps) index.

    Returns:
        The nodes, the constants, and the name of the ``(batch, steps, taps * in_channels)`` result.
    """
    from onnx import helper, numpy_helper

    def name(part: str) -> str:
        return f"{prefix}/{part}"

    taps, in_channels = shape
    reach = dilation * (taps - 1)
    offsets = dilation * np.arange(taps, dtype=np.int64).reshape(1, taps)
    constants = [
        numpy_helper.from_array(np.array(0, np.int64), name("zero")),
        numpy_helper.from_array(np.array(reach, np.int64), name("reach")),
        numpy_helper.from_array(np.array(stride, np.int64), name("stride")),
        numpy_helper.from_array(np.array([1], np.int64), name("axis")),
        numpy_helper.from_array(offsets, name("taps")),
        numpy_helper.from_array(np.array([0, -1, taps * in_channels], np.int64), name("rows")),
    ]
    nodes = [
        helper.make_node("Shape", [source], [name("length")], start=1, end=2),
        helper.make_node("Squeeze", [name("length")], [name("length_scalar")]),
        helper.make_node("Sub", [name("length_scalar"), name("reach")], [name("starts_end")]),
        helper.make_node("Range", [name("zero"), name("starts_end"), name("stride")], [name("starts")]),
        helper.make_node("Unsqueeze", [name("starts"), name("axis")], [name("starts_column")]),
        helper.make_node("Add", [name("starts_column"), name("taps")], [name("indices")]),
        helper.make_node("Gather", [source, name("indices")], [name("gathered")], axis=1),
        helper.make_node("Reshape", [name("gathered"), name("rows")], [name("columns")]),
    ]
    return nodes, constants, name("columns")
