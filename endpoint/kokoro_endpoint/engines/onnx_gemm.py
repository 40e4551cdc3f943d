"""The int8 graph's convolutions as signed-weight matrix products, where the CPU has VNNI.

The export quantizes each convolution dynamically: the activations to uint8 on every call
(``DynamicQuantizeLinear``), the weights to uint8 once, multiplied by ``ConvInteger``. onnxruntime's CPU
``ConvInteger`` multiplies uint8 by uint8, and MLAS's u8 x u8 kernel does about half the work per second of
its u8 x s8 one on a CPU with VNNI (AVX-512 VNNI or AVX-VNNI: ``vpdpbusd``). :func:`rewrite_convolutions`
turns each ``ConvInteger`` into the same product in matrix form:

- the quantized activations, time-major (``Transpose``), padded with their zero point (``Pad``);
- the kernel's taps gathered side by side (``Gather``: im2col, one row of ``taps x channels`` per output
  step);
- ``MatMulInteger`` against the weights re-encoded as int8 (``w - 128``, zero point ``- 128``: the same
  differences, so the same int32 sums), then back to channel-major (``Transpose``).

Its output is the ``ConvInteger``'s int32 tensor exactly, and the graph after it is unchanged, so the audio
is the same, sample for sample (``tests/endpoint/test_endpoint_onnx_gemm.py``). Without VNNI, MLAS's
u8 x s8 kernel adds pairs of products in 16 bits with saturation (``vpmaddubsw``), which could change a
sum, and other CPUs were not measured: there the graphs run as exported. ``KOKORO_ONNX_CONV_GEMM=0``
keeps the export's convolutions everywhere, ``=1`` rewrites them on any CPU.

The rewritten graph is written once into the endpoint's cache folder, keyed by its source's sha256.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Final

import numpy as np

from kokoro_endpoint.engines.onnx_graph import cache_dir, save_model, sha256_of

__all__ = ["conv_gemm_model", "cpu_has_vnni", "model_for_cpu", "rewrite_convolutions"]

logger = logging.getLogger(__name__)

_REWRITE_VERSION: Final = "1"
#: The CPU flags (Linux ``/proc/cpuinfo``) of an x86 CPU with a u8 x s8 dot product into 32 bits.
_VNNI_FLAGS: Final = frozenset({"avx512_vnni", "avx_vnni"})


def cpu_has_vnni(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU reports AVX-512 VNNI or AVX-VNNI (False where ``cpuinfo`` cannot be read)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return not _VNNI_FLAGS.isdisjoint(value.split())
    return False


def model_for_cpu(model_file: Path, cache: Path | None = None) -> Path:
    """The graph to load on this CPU: ``model_file`` with its convolutions rewritten, or as it is.

    Rewritten when ``$KOKORO_ONNX_CONV_GEMM`` is ``1``, or when it is unset (or ``auto``) and the CPU has
    VNNI; ``0`` keeps the export's convolutions.
    """
    setting = os.environ.get("KOKORO_ONNX_CONV_GEMM", "auto")
    if setting == "0" or (setting != "1" and not cpu_has_vnni()):
        return model_file
    return conv_gemm_model(model_file, cache)


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
        points, and graphs below opset 15 (``Shape`` with ``start``/``end``) are left as they are.
    """
    from onnx import numpy_helper

    if not any(entry.domain in ("", "ai.onnx") and entry.version >= 15 for entry in model.opset_import):
        return 0
    graph = model.graph
    constants = {tensor.name: tensor for tensor in graph.initializer}
    nodes: list[Any] = []
    added: list[Any] = []
    replaced: set[str] = set()
    rewritten = 0
    for node in graph.node:
        weights = constants.get(node.input[1]) if node.op_type == "ConvInteger" else None
        zero = constants.get(node.input[3]) if weights is not None and len(node.input) > 3 else None
        if weights is None or zero is None or not _plain(node, weights.dims):
            nodes.append(node)
            continue
        w = numpy_helper.to_array(weights)
        w_zero = numpy_helper.to_array(zero)
        if w.dtype != np.uint8 or w_zero.size != 1:
            nodes.append(node)
            continue
        new_nodes, new_constants = _as_matmul(node, w, int(w_zero.reshape(-1)[0]))
        nodes.extend(new_nodes)
        added.extend(new_constants)
        replaced.update((weights.name, zero.name))
        rewritten += 1
    if rewritten:
        del graph.node[:]
        graph.node.extend(nodes)
        graph.initializer.extend(added)
        # The uint8 weights no other node reads are dropped (a zero point can be shared).
        unused = replaced - _names_read(graph)
        kept = [tensor for tensor in graph.initializer if tensor.name not in unused]
        del graph.initializer[:]
        graph.initializer.extend(kept)
    return rewritten


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


def _as_matmul(node: Any, weights: np.ndarray[Any, Any], weight_zero: int) -> tuple[list[Any], list[Any]]:
    """The nodes and constants that compute ``node``'s int32 output as a ``MatMulInteger``."""
    from onnx import helper, numpy_helper

    attributes = _attributes(node)
    out_channels, in_channels, taps = weights.shape
    (dilation,) = (int(value) for value in attributes.get("dilations", [1]))
    (stride,) = (int(value) for value in attributes.get("strides", [1]))
    pad_start, pad_end = (int(pad) for pad in attributes.get("pads", [0, 0]))
    activations, activation_zero = node.input[0], node.input[2]
    prefix = f"{node.name or node.output[0]}/gemm"

    def name(part: str) -> str:
        return f"{prefix}/{part}"

    # Row (tap, input channel) of the matrix holds the weights of every output channel; - 128 keeps the
    # differences from the zero point, so the products are the same integers.
    signed = (weights.astype(np.int16) - 128).astype(np.int8)
    matrix = np.ascontiguousarray(signed.transpose(2, 1, 0).reshape(taps * in_channels, out_channels))
    constants = [
        numpy_helper.from_array(matrix, name("weights")),
        numpy_helper.from_array(np.array(weight_zero - 128, dtype=np.int8), name("weights_zero")),
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
