"""Time the TTS engine in process: the floor that no transport can beat.

Two views of the same floor: :func:`engine_first_segment_ms` times the engine alone on an otherwise idle
process; :class:`RecordingEngine` wraps the engine the endpoint serves from and records, for every request it
synthesizes during a trial, how long the engine itself took to its first segment under that trial's load.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["EngineCall", "RecordingEngine", "engine_first_segment_ms"]


def _close(segments: Iterator[Any]) -> None:
    """Stop an engine's synthesis (its segments are a generator; a plain iterator has nothing to stop)."""
    close = getattr(segments, "close", None)
    if close is not None:
        close()


@dataclass(frozen=True, slots=True)
class _WholeSegment:
    """A whole segment in the shape of a streamed piece (for an engine that cannot stream)."""

    audio: Any
    segment_end: bool = True
    timing: Any = None


def _pieces(engine: Any, text: str, voice: str, speed: float, **options: Any) -> Iterator[Any]:
    """``engine.stream`` where the engine streams (with ``options``, e.g. its interrupt); else each
    segment as one piece."""
    if hasattr(engine, "stream"):
        return iter(engine.stream(text, voice, speed, **options))
    return (_WholeSegment(audio) for audio in engine.synthesize(text, voice, speed))


def engine_first_segment_ms(
    engine: Any, text: str, *, voice: str, speed: float = 1.0, trials: int = 5, warmups: int = 1
) -> list[float]:
    """Time the engine to its first audio, in process, ``trials`` times after warm-up.

    The first audio is the first streamed piece where the engine streams (a window of a segment), else
    the first segment. The generator is closed after it, so the rest of the text is not synthesized.

    Args:
        engine: A loaded engine (``kokoro_endpoint.engines.interface.Engine``).
        text: The text; the benchmark passes the first chunk the app sent to the endpoint.
        voice: The voice.
        speed: The speaking rate.
        trials: Timed runs.
        warmups: Untimed runs first.

    Returns:
        Milliseconds per timed run.
    """
    timings: list[float] = []
    for index in range(warmups + trials):
        started = time.perf_counter()
        segments = _pieces(engine, text, voice, speed)
        try:
            next(segments)
            elapsed = time.perf_counter() - started
        finally:
            _close(segments)
        if index >= warmups:
            timings.append(elapsed * 1e3)
    return timings


@dataclass(frozen=True, slots=True)
class EngineCall:
    """One request's first segment as the engine computed it.

    Attributes:
        text: The text the endpoint asked the engine to speak.
        started: ``time.perf_counter()`` when the engine began the first segment.
        first_segment_s: Seconds the engine spent on it (its own work, under whatever load there was).
    """

    text: str
    started: float
    first_segment_s: float

    @property
    def finished(self) -> float:
        """``time.perf_counter()`` when the first segment was ready."""
        return self.started + self.first_segment_s


class RecordingEngine:
    """An engine that records the time to each request's first segment; everything else is delegated.

    Args:
        engine: The engine to wrap (``kokoro_endpoint.engines.interface.Engine``).
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.name: str = engine.name
        self.sample_rate: int = engine.sample_rate
        self.default_voice: str = engine.default_voice
        self.voices: frozenset[str] = engine.voices
        self._calls: list[EngineCall] = []
        self._lock = threading.Lock()  # the endpoint's synthesis workers record from their threads

    def warm_up(self) -> None:
        """Warm the wrapped engine."""
        self.engine.warm_up()

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[Any]:
        """The wrapped engine's segments; the first one is timed where it is computed."""
        yield from self._timed(text, lambda: self.engine.synthesize(text, voice, speed))

    @property
    def interruptible(self) -> bool:
        """Whether the wrapped engine's model call stops when the request's interrupt is set."""
        return bool(getattr(self.engine, "interruptible", False))

    @property
    def windowed(self) -> bool:
        """Whether the wrapped engine decodes in windows (it then takes ``produced_s``)."""
        return bool(getattr(self.engine, "windowed", False))

    def stream(
        self, text: str, voice: str, speed: float, interrupt: Any = None, produced_s: float = 0.0
    ) -> Iterator[Any]:
        """The wrapped engine's streamed pieces (a segment each when it cannot stream); the first is timed.

        ``interrupt`` (the endpoint's, when the wrapped engine is interruptible) and ``produced_s`` (the
        request's audio before ``text``, when it decodes in windows) are handed on.
        """
        options: dict[str, Any] = {"interrupt": interrupt} if interrupt is not None else {}
        if produced_s:
            options["produced_s"] = produced_s
        yield from self._timed(text, lambda: _pieces(self.engine, text, voice, speed, **options))

    def _timed(self, text: str, start: Callable[[], Iterable[Any]]) -> Iterator[Any]:
        """What ``start()`` yields, with the time to its first item recorded as one call."""
        items = iter(start())
        try:
            started = time.perf_counter()
            try:
                first = next(items)
            except StopIteration:
                return
            with self._lock:
                self._calls.append(EngineCall(text, started, time.perf_counter() - started))
            yield first
            yield from items
        finally:
            _close(items)

    @property
    def calls(self) -> list[EngineCall]:
        """Every recorded call so far, in the order their first segments were ready."""
        with self._lock:
            return list(self._calls)
