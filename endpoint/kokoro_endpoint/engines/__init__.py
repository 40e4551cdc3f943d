"""Speech engines behind one interface: Kokoro-82M on onnxruntime (int8) or on PyTorch.

``load_engine("onnx")`` is the offline default (tests, CI, laptops); ``load_engine("torch")`` runs the
full-precision model with ``kokoro`` on CUDA when present; ``load_engine("auto")`` takes torch when local
weights exist (and torch is installed), else onnx.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.speech import SpeechSegment
from kokoro_endpoint.normalize import identity, normalize_for_speech
from kokoro_endpoint.scheduler import close_iterator
from kokoro_endpoint.text import locate, split_segments
from kokoro_endpoint.timestamps import segment_words, token_spans
from strands_voice.frames import WordTiming

__all__ = [
    "ENGINE_KINDS",
    "Engine",
    "RequestAudio",
    "TimedEngine",
    "choose_engine_kind",
    "load_engine",
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
class TimedEngine(Engine, Protocol):
    """An engine that also reports each segment's phoneme durations (for word timestamps)."""

    def synthesize_timed(self, text: str, voice: str, speed: float) -> Iterator[SpeechSegment]:
        """Like :meth:`Engine.synthesize`, yielding :class:`SpeechSegment` (audio and timing)."""
        ...


@dataclass(frozen=True, slots=True)
class RequestAudio:
    """One segment of a request: its audio and, when asked, the words it speaks.

    Attributes:
        audio: Mono float32 audio.
        words: The words, ``char_*`` indexing the request's original text, times from this segment's first
            sample (the sender adds the audio already sent); empty when timestamps were not asked for.
    """

    audio: npt.NDArray[np.float32]
    words: tuple[WordTiming, ...] = ()


def synthesize_segments(
    engine: Engine,
    text: str,
    voice: str,
    speed: float,
    clause_chars: int | None,
    *,
    normalize: bool = True,
    timestamps: bool = False,
) -> Iterator[RequestAudio]:
    """A request's audio, one engine call per sentence or phrase (``text.split_segments``).

    Args:
        engine: The loaded engine.
        text: The request's text, as the client sent it.
        voice: One of the engine's voices.
        speed: Speaking rate.
        clause_chars: Sentences longer than this are split at clause punctuation; None keeps them whole.
        normalize: Read written forms the way people say them (``normalize.normalize_for_speech``).
        timestamps: Work out each segment's words (needs a :class:`TimedEngine`; others give none).

    Yields:
        The segments, in order. Closing this generator closes the engine's current one.
    """
    normalized = normalize_for_speech(text) if normalize else identity(text)
    timed = timestamps and isinstance(engine, TimedEngine)
    cursor = 0
    for piece in split_segments(normalized.text, clause_chars):
        offset = max(cursor, locate(normalized.text, piece, cursor))
        cursor = offset + 1
        if timed:
            segments: Iterator[Any] = engine.synthesize_timed(piece, voice, speed)  # type: ignore[attr-defined]
        else:
            segments = engine.synthesize(piece, voice, speed)
        try:
            for segment in segments:
                if not isinstance(segment, SpeechSegment):
                    yield RequestAudio(segment)
                    continue
                words: list[WordTiming] = []
                if segment.timing is not None:
                    spans = token_spans(segment.timing, engine.sample_rate)
                    words = segment_words(spans, offset, normalized)
                yield RequestAudio(segment.audio, tuple(words))
        finally:
            close_iterator(segments)


def load_engine(kind: str = "auto", model_dir: str | Path | None = None, device: str | None = None) -> Engine:
    """Load a Kokoro-82M engine.

    Args:
        kind: ``"onnx"``, ``"torch"`` or ``"auto"`` (torch when local weights exist and torch is
            installed, else onnx).
        model_dir: Where the torch weights are (``config.json``, ``kokoro-v1_0.pth``, ``voices/*.pt``);
            defaults to ``$SM_MODEL_DIR`` or ``/opt/ml/model``.
        device: The torch engine's device (``cuda``/``cpu``); None lets it choose (CUDA when available).

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

    return TorchEngine.load(model_dir, device)


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
