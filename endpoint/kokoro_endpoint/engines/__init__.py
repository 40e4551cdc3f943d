"""Speech engines behind one interface: Kokoro-82M on onnxruntime (int8) or on PyTorch.

``load_engine("onnx")`` is the offline default (tests, CI, laptops); ``load_engine("torch")`` runs the
full-precision model with ``kokoro`` on CUDA when present; ``load_engine("auto")`` takes torch when local
weights exist (and torch is installed), else onnx.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.frames import WordTiming

from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.speech import SpeechSegment
from kokoro_endpoint.languages import Reading, normalized
from kokoro_endpoint.scheduler import close_iterator
from kokoro_endpoint.silence import SegmentShaper, SilencePolicy, pause_after
from kokoro_endpoint.text import locate, split_segments
from kokoro_endpoint.timestamps import segment_words, shift_words, token_spans

__all__ = [
    "ENGINE_KINDS",
    "Engine",
    "ReadingEngine",
    "RequestAudio",
    "SpeechPiece",
    "StreamingEngine",
    "TimedEngine",
    "audio_seconds",
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
        stop between pieces. A segment's last piece has ``segment_end`` set; its first carries the
        segment's timing when the engine knows it.

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


@runtime_checkable
class ReadingEngine(Engine, Protocol):
    """An engine that reads more than American English and takes a lexicon.

    Each of its synthesis methods (``synthesize`` and, where it has them, ``stream`` and
    ``synthesize_timed``) takes a keyword ``reading`` (:class:`~kokoro_endpoint.languages.Reading`: the
    language and the lexicon; None: American English). An engine that is not one reads American English
    (or whatever its own G2P reads) and takes no lexicon.

    Attributes:
        languages: The language letters it reads.
        phonemes: Its model's phoneme alphabet (lexicon entries must use only these).
    """

    languages: frozenset[str]
    phonemes: frozenset[str]


def speech_pieces(
    engine: Engine, text: str, voice: str, speed: float, reading: Reading | None = None
) -> Iterator[SpeechPiece]:
    """The engine's audio as pieces: streamed where the engine can, else one piece per segment.

    A :class:`TimedEngine` that cannot stream gives one piece per segment carrying its timing. ``reading``
    reaches a :class:`ReadingEngine` (the others were only given requests they read: see
    ``synthesis_job``). Closing this generator closes the engine's.
    """
    pieces: Iterator[SpeechPiece]
    read = {"reading": reading} if isinstance(engine, ReadingEngine) else {}
    if isinstance(engine, StreamingEngine):
        pieces = engine.stream(text, voice, speed, **read)
    elif isinstance(engine, TimedEngine):
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


@dataclass(frozen=True, slots=True)
class RequestAudio:
    """One output of a request: its audio and, when asked, the words whose first sound it carries.

    Attributes:
        audio: Mono float32 audio.
        words: The words, ``char_*`` indexing the request's original text, times from this output's first
            sample (the sender adds the audio already sent); empty when timestamps were not asked for.
    """

    audio: npt.NDArray[np.float32]
    words: tuple[WordTiming, ...] = ()


def audio_seconds(sample_rate: int) -> Callable[[RequestAudio], float]:
    """How many seconds of audio an output holds, at ``sample_rate`` (the scheduler's playback clock)."""
    return lambda output: output.audio.size / sample_rate


def synthesize_segments(
    engine: Engine,
    text: str,
    voice: str,
    speed: float,
    clause_chars: int | None,
    silence: SilencePolicy | None = None,
    *,
    normalize: bool = True,
    timestamps: bool = False,
    reading: Reading | None = None,
) -> Iterator[RequestAudio]:
    """A request's audio: one engine call per sentence or phrase (``text.split_segments``), streamed.

    The text is normalized first (``languages.normalized``: English text by ``normalize_for_speech``).
    With a silence policy that trims, each segment's own leading and trailing silence is cut and the
    policy's pause follows it (by how its text ends; inside a phrase the engine had to split, a clause
    pause); see :mod:`kokoro_endpoint.silence`. With timestamps, each segment's words ride on the output
    that carries its first sound, timed from that output's first sample (what the trimming dropped and any
    pause put before it accounted for).

    Args:
        engine: The loaded engine.
        text: The request's text, as the client sent it.
        voice: One of the engine's voices, or a blend of them.
        speed: Speaking rate.
        clause_chars: Sentences longer than this are split at clause punctuation; None keeps them whole.
        silence: How to shape silence; None (or ``trim=False``) sends the engine's audio as it is.
        normalize: Read written forms the way people say them (``normalize.normalize_for_speech``).
        timestamps: Work out each segment's words (needs an engine that reports timing; others give none).
        reading: The language and lexicon (None: American English, no lexicon).

    Yields:
        Outputs as they are ready (never empty audio), one per engine step (plus each phrase's pause).
        Closing this generator closes the engine's current call.
    """
    rate = engine.sample_rate
    policy = silence if silence is not None and silence.trim else None
    shaper = SegmentShaper(policy, rate) if policy is not None else None
    reading = reading or Reading()
    spoken = normalized(text, reading.lang, normalize)
    empty = np.zeros(0, dtype=np.float32)
    emitted = 0  # samples yielded so far
    words_end = 0  # where (in samples yielded) the last word placed ends
    cursor = 0
    for phrase in split_segments(spoken.text, clause_chars):
        offset = max(cursor, locate(spoken.text, phrase, cursor))
        cursor = offset + 1
        pieces = speech_pieces(engine, phrase, voice, speed, reading)
        try:
            owed = False  # the segment before (in this phrase) owes a clause pause
            words: list[WordTiming] = []  # the current segment's words, until its first sound is out
            for piece in pieces:
                if timestamps and piece.timing is not None:
                    words = segment_words(token_spans(piece.timing, rate), offset, spoken)
                if shaper is None or policy is None:
                    audio, first_sound, shift = piece.audio, piece.audio.size > 0, 0.0
                else:
                    # One output per engine step: a pause owed by the segment before, this piece's sound,
                    # and, when the piece ends its segment, the kept tail.
                    head = _pause(policy.clause_pause_ms, rate, words_end - emitted) if owed else empty
                    was_sounding = shaper.sounding
                    sound = shaper.feed(piece.audio)
                    first_sound = shaper.sounding and not was_sounding
                    shift = (len(head) - shaper.lead_dropped) / rate
                    owed = piece.segment_end
                    tail = shaper.end_segment(0.0) if owed else empty
                    audio = np.concatenate([head, sound, tail])
                placed: tuple[WordTiming, ...] = ()
                if words and first_sound:
                    placed, words = shift_words(words, shift), []
                    words_end = emitted + round(max(word.end_s for word in placed) * rate)
                if piece.segment_end:
                    words = []  # a segment without sound has no words to show
                if audio.size:
                    emitted += audio.size
                    yield RequestAudio(audio, placed)
            if policy is not None and owed:
                pause = _pause(pause_after(phrase, policy), rate, words_end - emitted)
                if pause.size:
                    emitted += pause.size
                    yield RequestAudio(pause)
        finally:
            close_iterator(pieces)


def _pause(ms: float, rate: int, at_least: int) -> npt.NDArray[np.float32]:
    """A pause of ``ms``, or of ``at_least`` samples when longer.

    The model's durations may give a segment's last word a longer end than the sound the trimming kept;
    the pause after it then lasts until that end, so the next segment's words never start before it.
    """
    return np.zeros(max(round(rate * ms / 1000), at_least), dtype=np.float32)


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
        ConfigurationError: unknown kind.
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
        ConfigurationError: unknown kind.
    """
    if kind not in ENGINE_KINDS:
        raise ConfigurationError(f"engine must be one of {', '.join(ENGINE_KINDS)}")
    if kind != "auto":
        return kind
    from kokoro_endpoint.engines.weights import local_weights

    chosen = "torch" if local_weights(model_dir) is not None and _torch_installed() else "onnx"
    logger.info("engine=<%s> | auto-selected", chosen)
    return chosen


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("kokoro") is not None
