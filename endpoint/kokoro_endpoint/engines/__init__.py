"""Speech engines behind one interface: Kokoro-82M on onnxruntime (int8) or on PyTorch.

``load_engine("onnx")`` is the offline default (tests, CI, laptops); ``load_engine("torch")`` runs the
full-precision model with ``kokoro`` on CUDA when present; ``load_engine("auto")`` takes torch when local
weights exist (and torch is installed), else onnx.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.scheduler import close_iterator
from kokoro_endpoint.silence import SegmentShaper, SilencePolicy, pause_after
from kokoro_endpoint.text import split_segments

__all__ = [
    "ENGINE_KINDS",
    "Engine",
    "SpeechPiece",
    "StreamingEngine",
    "choose_engine_kind",
    "load_engine",
    "speech_pieces",
    "synthesize_segments",
]

logger = logging.getLogger(__name__)

ENGINE_KINDS = ("auto", "onnx", "torch")


@runtime_checkable
class Engine(Protocol):
    """A loaded TTS model.

    Attributes:
        name: ``"onnx"`` or ``"torch"``.
        sample_rate: Output sample rate (24,000 for Kokoro).
        default_voice: The voice used when a request names none.
        voices: Every voice name this engine accepts.
    """

    name: str
    sample_rate: int
    default_voice: str
    voices: frozenset[str]

    def warm_up(self) -> None:
        """Run one short synthesis so the first real request is not slow; cheap when already warm."""
        ...

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        """Synthesize text segment by segment.

        Each ``next()`` does one segment's work (G2P and one model call), so a caller can interleave
        several requests fairly and stop between segments.

        Args:
            text: The text to speak.
            voice: One of :attr:`voices`.
            speed: Speaking rate, 1.0 is normal.

        Yields:
            Mono float32 audio in [-1, 1] at :attr:`sample_rate`, one array per segment.

        Raises:
            ValueError: unknown voice.
        """
        ...


@runtime_checkable
class StreamingEngine(Engine, Protocol):
    """An engine that can also stream within a segment."""

    def stream(self, text: str, voice: str, speed: float) -> Iterator[SpeechPiece]:
        """Synthesize text, yielding each segment's audio in pieces as soon as each is ready.

        Each ``next()`` does one piece's work (one model call), so a caller can interleave requests and
        stop between pieces. A segment's last piece has ``segment_end`` set.

        Raises:
            ValueError: unknown voice.
        """
        ...


def speech_pieces(engine: Engine, text: str, voice: str, speed: float) -> Iterator[SpeechPiece]:
    """The engine's audio as pieces: streamed where the engine can, else one piece per segment.

    Closing this generator closes the engine's.
    """
    if isinstance(engine, StreamingEngine):
        pieces = engine.stream(text, voice, speed)
        try:
            yield from pieces
        finally:
            close_iterator(pieces)
        return
    segments = engine.synthesize(text, voice, speed)
    try:
        for audio in segments:
            yield SpeechPiece(audio, True)
    finally:
        close_iterator(segments)


def synthesize_segments(
    engine: Engine,
    text: str,
    voice: str,
    speed: float,
    clause_chars: int | None,
    silence: SilencePolicy | None = None,
) -> Iterator[npt.NDArray[np.float32]]:
    """A request's audio: one engine call per sentence or phrase (``text.split_segments``), streamed.

    With a silence policy that trims, each segment's own leading and trailing silence is cut and the
    policy's pause follows it (by how its text ends; inside a phrase the engine had to split, a clause
    pause); see :mod:`kokoro_endpoint.silence`.

    Args:
        engine: The loaded engine.
        text: The request's text.
        voice: One of the engine's voices.
        speed: Speaking rate.
        clause_chars: Sentences longer than this are split at clause punctuation; None keeps them whole.
        silence: How to shape silence; None (or ``trim=False``) sends the engine's audio as it is.

    Yields:
        Audio as it is ready (never empty). Closing this generator closes the engine's current call.
    """
    policy = silence if silence is not None and silence.trim else None
    if policy is None:
        for phrase in split_segments(text, clause_chars):
            pieces = speech_pieces(engine, phrase, voice, speed)
            try:
                yield from (piece.audio for piece in pieces if piece.audio.size)
            finally:
                close_iterator(pieces)
        return
    shaper = SegmentShaper(policy, engine.sample_rate)
    rate = engine.sample_rate
    for phrase in split_segments(text, clause_chars):
        pieces = speech_pieces(engine, phrase, voice, speed)
        try:
            # One output per engine step: a pause owed by the segment before, this piece's sound, and,
            # when the piece ends its segment, the kept tail.
            owed = False
            for piece in pieces:
                parts = [_silence(policy.clause_pause_ms, rate)] if owed else []
                parts.append(shaper.feed(piece.audio))
                owed = piece.segment_end
                if owed:
                    parts.append(shaper.end_segment(0.0))
                audio = np.concatenate(parts)
                if audio.size:
                    yield audio
            if owed:
                pause = _silence(pause_after(phrase, policy), rate)
                if pause.size:
                    yield pause
        finally:
            close_iterator(pieces)


def _silence(ms: float, rate: int) -> npt.NDArray[np.float32]:
    return np.zeros(round(rate * ms / 1000), dtype=np.float32)


def load_engine(kind: str = "auto", model_dir: str | Path | None = None) -> Engine:
    """Load a Kokoro-82M engine.

    Args:
        kind: ``"onnx"``, ``"torch"`` or ``"auto"`` (torch when local weights exist and torch is
            installed, else onnx).
        model_dir: Where the torch weights are (``config.json``, ``kokoro-v1_0.pth``, ``voices/*.pt``);
            defaults to ``$SM_MODEL_DIR`` or ``/opt/ml/model``.

    Returns:
        The loaded (not yet warmed) engine.

    Raises:
        ValueError: unknown kind.
        MissingDependencyError: the engine's packages are not installed.
    """
    kind = choose_engine_kind(kind, model_dir)
    if kind == "onnx":
        from kokoro_endpoint.engines.onnx_engine import OnnxEngine

        return OnnxEngine.load()
    from kokoro_endpoint.engines.torch_engine import TorchEngine

    return TorchEngine.load(model_dir)


def choose_engine_kind(kind: str, model_dir: str | Path | None = None) -> str:
    """Resolve ``auto``: ``torch`` when local weights exist and torch + kokoro are installed, else ``onnx``.

    Raises:
        ValueError: unknown kind.
    """
    if kind not in ENGINE_KINDS:
        raise ValueError(f"engine must be one of {', '.join(ENGINE_KINDS)}")
    if kind != "auto":
        return kind
    from kokoro_endpoint.engines.weights import local_weights

    chosen = "torch" if local_weights(model_dir) is not None and _torch_installed() else "onnx"
    logger.info("engine=<%s> | auto-selected", chosen)
    return chosen


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("kokoro") is not None
