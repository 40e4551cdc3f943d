"""What the endpoint asks of a speech engine: the ``Engine`` protocols, and any engine's audio as pieces.

Both engines (:mod:`~kokoro_endpoint.engines.onnx.onnx_engine`, :mod:`~kokoro_endpoint.engines.torch_engine`)
implement :class:`Engine`; what else each can do (stream within a segment, report phoneme durations, read
other languages) is a protocol of its own, checked at run time.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.speech import SpeechSegment
from kokoro_endpoint.reading.languages import Reading
from kokoro_endpoint.scheduling.interrupt import Interrupt, close_iterator

__all__ = [
    "Engine",
    "InterruptibleEngine",
    "ReadingEngine",
    "SegmentTimingEngine",
    "StreamingEngine",
    "WindowedEngine",
    "speech_pieces",
]


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
        stop between pieces. A segment's last piece has ``segment_end`` set; its first carries the
        segment's timing when the engine knows it.

        Raises:
            ValueError: unknown voice.
        """
        ...


@runtime_checkable
class InterruptibleEngine(StreamingEngine, Protocol):
    """A streaming engine whose model call can be stopped mid-way from another thread.

    Its :meth:`~StreamingEngine.stream` takes a keyword ``interrupt``
    (:class:`~kokoro_endpoint.scheduling.interrupt.Interrupt`): once it is set, the call running stops and the
    iterator raises :class:`~kokoro_endpoint.scheduling.interrupt.SynthesisInterrupted`. Other engines finish
    the step they are in (the scheduler closes them after it).

    Attributes:
        interruptible: True.
    """

    interruptible: bool


@runtime_checkable
class WindowedEngine(StreamingEngine, Protocol):
    """A streaming engine that decodes a segment in windows, the first one small for the first sound.

    Its :meth:`~StreamingEngine.stream` takes a keyword ``produced_s``: the seconds of audio its request
    produced before this text. That audio plays while the text's first window is decoded, so the engine may
    make that window larger (fewer windows, fewer context frames decoded). A pure function of the request,
    so the same request gives the same samples.

    Attributes:
        windowed: Whether it decodes in windows now.
    """

    windowed: bool


@runtime_checkable
class SegmentTimingEngine(Engine, Protocol):
    """An engine that also reports each segment's phoneme durations (for word timestamps)."""

    def synthesize_timed(self, text: str, voice: str, speed: float) -> Iterator[SpeechSegment]:
        """Like :meth:`Engine.synthesize`, yielding :class:`SpeechSegment` (audio and timing)."""
        ...


@runtime_checkable
class ReadingEngine(Engine, Protocol):
    """An engine that reads more than American English and takes a lexicon.

    Each of its synthesis methods (``synthesize`` and, where it has them, ``stream`` and
    ``synthesize_timed``) takes a keyword ``reading`` (:class:`~kokoro_endpoint.reading.languages.Reading`:
    the language and the lexicon; None: American English). An engine that is not one reads American English
    (or whatever its own G2P reads) and takes no lexicon.

    Attributes:
        languages: The language letters it reads.
        phonemes: Its model's phoneme alphabet (lexicon entries must use only these).
    """

    languages: frozenset[str]
    phonemes: frozenset[str]


def speech_pieces(
    engine: Engine,
    text: str,
    voice: str,
    speed: float,
    *,
    reading: Reading | None = None,
    interrupt: Interrupt | None = None,
    produced_s: float = 0.0,
) -> Generator[SpeechPiece, None, None]:
    """The engine's audio as pieces: streamed where the engine can, else one piece per segment.

    A :class:`SegmentTimingEngine` that cannot stream gives one piece per segment carrying its timing.
    ``reading`` reaches a :class:`ReadingEngine` (the others were only given requests they read: see
    ``synthesis_job``), ``interrupt`` an :class:`InterruptibleEngine`, ``produced_s`` (the request's audio
    before this text) a :class:`WindowedEngine`. Closing this generator closes the engine's.
    """
    pieces: Iterator[SpeechPiece]
    read: dict[str, Any] = {"reading": reading} if isinstance(engine, ReadingEngine) else {}
    if interrupt is not None and isinstance(engine, InterruptibleEngine) and engine.interruptible:
        read["interrupt"] = interrupt
    if produced_s > 0 and isinstance(engine, WindowedEngine) and engine.windowed:
        read["produced_s"] = produced_s
    if isinstance(engine, StreamingEngine):
        pieces = engine.stream(text, voice, speed, **read)
    elif isinstance(engine, SegmentTimingEngine):
        pieces = _whole_pieces(engine.synthesize_timed(text, voice, speed, **read))
    else:
        pieces = _whole_pieces(engine.synthesize(text, voice, speed, **read))
    try:
        yield from pieces
    finally:
        close_iterator(pieces)


def _whole_pieces(segments: Iterator[Any]) -> Iterator[SpeechPiece]:
    """Each segment (a :class:`SpeechSegment` or bare audio) as one piece; closing it closes ``segments``."""
    try:
        for segment in segments:
            if isinstance(segment, SpeechSegment):
                yield SpeechPiece(segment.audio, True, segment.timing)
            else:
                yield SpeechPiece(segment, True)
    finally:
        close_iterator(segments)
