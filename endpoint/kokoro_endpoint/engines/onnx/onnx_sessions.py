"""The ONNX engine's onnxruntime sessions: which graphs, on which CPU path, with which thread pools.

The int8 export is split once into an encoder and a decoder (:mod:`.onnx_split`); on a CPU whose path says
so (:mod:`.cpu_path`) each graph's convolutions are rewritten as u8 x s8 matrix products
(:mod:`.onnx_gemm`). When the split is not possible the original graph runs whole, made to output the
per-token durations (:mod:`.onnx_graph`).

Each session has its own pool of intra-op threads, as many as the path says (the physical cores, or
``KOKORO_ONNX_THREADS``). Idle pool threads sleep rather than spin unless ``KOKORO_ONNX_SPINNING=1``
(onnxruntime's own default): the encoder's and the decoder's pools are separate, and a request's first step
runs one right after the other, so the first's spinning threads (most likely) took cores from the second's
run (docs/benchmarks.md: 24-58 ms per request).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kokoro_endpoint.engines.onnx.cpu_path import CpuPath, cpu_path
from kokoro_endpoint.engines.onnx.onnx_gemm import model_for_path
from kokoro_endpoint.engines.onnx.onnx_graph import model_with_durations
from kokoro_endpoint.engines.onnx.onnx_split import split_model

__all__ = ["EngineSessions", "SplitSessions", "open_sessions", "session_options"]

logger = logging.getLogger(__name__)


class SplitSessions:
    """The encoder and decoder sessions of the split graph.

    Args:
        encoder: ``onnxruntime.InferenceSession`` of the encoder (tokens, style, speed -> features).
        decoder: ``onnxruntime.InferenceSession`` of the decoder (style, features, phase_offset -> audio).
    """

    def __init__(self, encoder: Any, decoder: Any) -> None:
        self.encoder = encoder
        self.decoder = decoder


@dataclass(frozen=True)
class EngineSessions:
    """What :func:`open_sessions` opened: the split graph's two sessions, else the whole graph's one.

    Attributes:
        whole: The whole graph's session (None when the split opened).
        split: The encoder's and decoder's sessions (None when the graph could not be split).
        path: The CPU path the sessions were built for.
    """

    whole: Any
    split: SplitSessions | None
    path: CpuPath


def session_options(threads: int | None = None) -> Any:
    """The onnxruntime session options of the engine's sessions.

    Args:
        threads: Intra-op threads; this CPU's path's (:func:`.cpu_path.cpu_path`: ``$KOKORO_ONNX_THREADS``
            or the physical cores) when None.
    """
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or cpu_path().threads
    options.log_severity_level = 3
    if os.environ.get("KOKORO_ONNX_SPINNING", "0") != "1":
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def open_sessions(model_file: Path, path: CpuPath, threads: int | None = None) -> EngineSessions:
    """Open the engine's sessions of ``model_file`` for ``path`` (logged), split if possible.

    Args:
        model_file: The Kokoro int8 export.
        path: The CPU path (:func:`.cpu_path.cpu_path`): which graphs, how many threads.
        threads: Intra-op threads instead of the path's.
    """
    import onnxruntime as ort

    if threads:
        path = CpuPath(path.isa, path.forced, path.conv_gemm, threads, "the caller")
    logger.info("%s | onnx engine cpu path", path.describe())
    options = session_options(path.threads)

    def open_graph(graph: Path) -> Any:
        graph = model_for_path(graph, path)
        return ort.InferenceSession(str(graph), sess_options=options, providers=["CPUExecutionProvider"])

    try:
        parts = split_model(model_file)
        return EngineSessions(None, SplitSessions(open_graph(parts.encoder), open_graph(parts.decoder)), path)
    except Exception:
        logger.warning(
            "the graph could not be split: the whole graph runs (no windowed decoding)", exc_info=True
        )
        # The split encoder outputs the durations; without it, the derived whole graph does (if any).
        return EngineSessions(open_graph(model_with_durations(model_file)), None, path)
