"""Split the Kokoro ONNX graph into an encoder and a decoder (once, cached on disk).

The int8 export is one graph (inputs ``tokens``, ``style``, ``speed``; output ``audio``) whose nodes are
named ``/encoder/...`` and ``/decoder/...``. The decoder section reads only ``style`` and three encoder
tensors: the aligned text features and the F0 and energy curves. Cutting there with ``onnx.utils.Extractor``
gives:

- an **encoder** (text encoder, duration, F0 and energy predictors: the whole segment's prosody) that also
  outputs the per-token durations (``/encoder/Clip_output_0``, for word timestamps) and the harmonic
  source's running phase (``.../l_sin_gen/CumSum_output_0``, computed from the F0 curve alone);
- a **decoder** (the vocoder) with one extra input, ``phase_offset``, added to that running phase, so a
  window of frames decoded on its own continues the phase of the frames before it.

Both graphs pass ``onnx.checker`` (the phase's ``Add`` goes right before the node that reads it, so the
nodes stay in topological order). Run on the whole segment, encoder + decoder give exactly the original
graph's audio. The two files are
written to the endpoint's cache folder (``onnx_graph.cache_dir``: ``$KOKORO_ENDPOINT_CACHE``, default
``~/.cache/kokoro_endpoint``) under the source model's sha256, so a changed model gets new ones; when
anything fails the engine keeps the original graph, made to output the durations (``onnx_graph``).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kokoro_endpoint.engines.onnx.onnx_graph import DURATION_TENSOR, cache_dir, sha256_of

__all__ = [
    "ASR",
    "CUMSUM",
    "ENERGY",
    "F0",
    "PHASE_OFFSET",
    "SplitModel",
    "split_model",
]

logger = logging.getLogger(__name__)

#: The aligned text features (1, 512, frames).
ASR: Final = "/encoder/MatMul_1_output_0"
#: The F0 curve (1, 2 * frames).
F0: Final = "/encoder/Reshape_output_0"
#: The energy curve (1, 2 * frames).
ENERGY: Final = "/encoder/Reshape_1_output_0"
#: The harmonic source's running phase in cycles, at the F0 curve's rate (1, 2 * frames, 9 harmonics).
CUMSUM: Final = "/decoder/decoder/generator/m_source/l_sin_gen/CumSum_output_0"
#: The decoder's extra input: added to the running phase (1, 1, 9).
PHASE_OFFSET: Final = "phase_offset"

#: "2": the phase's Add in topological order (version 1 appended it last, which onnx.checker refuses).
_LAYOUT_VERSION: Final = "2"


@dataclass(frozen=True)
class SplitModel:
    """The two cached graphs."""

    encoder: Path
    decoder: Path


def split_model(source: Path, cache: Path | None = None) -> SplitModel:
    """The encoder and decoder graphs of ``source``, built on first use and cached.

    Args:
        source: The Kokoro ONNX model.
        cache: Where to keep the split graphs; ``onnx_graph.cache_dir()`` when None.

    Returns:
        Paths of the two graphs.

    Raises:
        Exception: the graph could not be split (``onnx`` missing, an unexpected graph); the caller
            falls back to the original graph.
    """
    folder = (cache or cache_dir()) / f"split-v{_LAYOUT_VERSION}-{sha256_of(source)[:16]}"
    split = SplitModel(folder / "encoder.onnx", folder / "decoder.onnx")
    if split.encoder.is_file() and split.decoder.is_file():
        return split
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f"{folder.name}."))
    try:
        _build(source, staging)
        try:
            staging.rename(folder)  # atomic: a concurrent build either wins or finds it done
        except OSError:
            if not (split.encoder.is_file() and split.decoder.is_file()):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logger.info("folder=<%s> | kokoro graph split into encoder and decoder", folder)
    return split


def _build(source: Path, folder: Path) -> None:
    import onnx

    model = onnx.load(str(source))
    extractor = onnx.utils.Extractor(model)
    encoder = extractor.extract_model(
        ["tokens", "style", "speed"], [ASR, F0, ENERGY, DURATION_TENSOR, CUMSUM]
    )
    decoder = extractor.extract_model(["style", ASR, F0, ENERGY], ["audio"])
    _carry_phase(decoder)
    for part in (encoder, decoder):
        onnx.checker.check_model(part)  # a graph other tools can load too; the caller falls back if not
    onnx.save(encoder, str(folder / "encoder.onnx"))
    onnx.save(decoder, str(folder / "decoder.onnx"))


def _carry_phase(decoder: Any) -> None:
    """Add ``phase_offset`` to the decoder's running phase, right before the one node that reads it."""
    from onnx import TensorProto, helper

    graph = decoder.graph
    carried = f"{CUMSUM}_carried"
    readers = [index for index, node in enumerate(graph.node) if CUMSUM in node.input]
    if len(readers) != 1 or list(graph.node[readers[0]].input).count(CUMSUM) != 1:
        raise ValueError(f"expected one reader of the harmonic phase, found {len(readers)}")
    reader = graph.node[readers[0]]
    reader.input[list(reader.input).index(CUMSUM)] = carried
    add = helper.make_node("Add", [CUMSUM, PHASE_OFFSET], [carried], name="/phase_carry/Add")
    graph.node.insert(readers[0], add)  # after the phase's producer (earlier), before its reader
    graph.input.append(helper.make_tensor_value_info(PHASE_OFFSET, TensorProto.FLOAT, [1, 1, 9]))
