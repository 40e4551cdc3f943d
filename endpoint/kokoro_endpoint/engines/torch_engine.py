"""Kokoro-82M on PyTorch (``kokoro``'s KModel and KPipeline), on CUDA when present.

Weights come from a local model directory (``--model-dir``, ``$SM_MODEL_DIR`` or ``/opt/ml/model``:
``config.json``, ``kokoro-v1_0.pth``, ``voices/*.pt``). On a machine with internet and no local weights
they are fetched from the hub at a pinned revision (with a progress bar). Nothing else touches the hub:
the model is built from explicit paths, voices are loaded from ``.pt`` files, and English G2P is offline.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError
from strands_voice_protocol.wire import SAMPLE_RATE

from kokoro_endpoint.engines.speech import (
    SegmentTiming,
    SpeechSegment,
    audio_only,
    g2p_tokens,
    phoneme_frames,
)
from kokoro_endpoint.engines.warmup import WarmUpOnce
from kokoro_endpoint.engines.weights import (
    CHECKPOINT_NAME,
    HUB_REPO_ID,
    HUB_REVISION,
    KokoroWeights,
    local_weights,
    resolve_model_dir,
)
from kokoro_endpoint.reading.g2p import offline_misaki_g2p
from kokoro_endpoint.reading.languages import ENGLISH, G2P, Readers, Reading, installed_languages
from kokoro_endpoint.text.segmentation import MAX_PHONEMES, locate, split_phonemes, split_sentences
from kokoro_endpoint.voices import KOKORO_DEFAULT_VOICE, parse_voice, unknown_part

__all__ = [
    "CheckpointMismatchError",
    "TorchEngine",
    "download_weights",
    "verify_checkpoint",
]

logger = logging.getLogger(__name__)

#: Audio samples per predicted duration frame (kokoro: 24 kHz, 40 frames a second).
FRAME_SAMPLES: Final = 600
_HUB_PATTERNS: Final = ["config.json", CHECKPOINT_NAME, "voices/*.pt"]


class CheckpointMismatchError(RuntimeError):
    """The checkpoint's parameter names do not match the model's (KModel would load it partially)."""


def _import_torch() -> tuple[Any, Any, Any]:
    try:
        import torch
        from kokoro import KModel, KPipeline  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError(
            "the torch engine needs: pip install 'kokoro-endpoint[torch]' (torch>=2.10, kokoro)"
        ) from None
    return torch, KModel, KPipeline


def _strip_module_prefix(state: dict[str, Any]) -> dict[str, Any]:
    # Checkpoints saved from DataParallel prefix every key with "module."; KModel strips it on retry.
    if state and all(key.startswith("module.") for key in state):
        return {key[len("module.") :]: value for key, value in state.items()}
    return state


def verify_checkpoint(model: Any, checkpoint: str | Path) -> None:
    """Check that every parameter of ``model`` was in the checkpoint and nothing else was.

    ``KModel`` retries a failed strict load with ``strict=False`` and stays silent about what it skipped,
    so a wrong checkpoint would give a half-random model; this makes that an error.

    Raises:
        CheckpointMismatchError: with the first few missing or unexpected names.
    """
    torch, _, _ = _import_torch()
    saved = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
    problems: list[str] = []
    children = dict(model.named_children())
    for name in sorted(set(saved) - set(children)):
        problems.append(f"unexpected component {name}")
    for name, module in children.items():
        if name not in saved:
            problems.append(f"missing component {name}")
            continue
        expected = set(module.state_dict())
        found = set(_strip_module_prefix(dict(saved[name])))
        problems += [f"missing {name}.{key}" for key in sorted(expected - found)]
        problems += [f"unexpected {name}.{key}" for key in sorted(found - expected)]
    if problems:
        shown = "; ".join(problems[:8])
        raise CheckpointMismatchError(
            f"checkpoint does not match the model ({len(problems)} problems): {shown}"
        )


def download_weights(cache_dir: str | Path | None = None) -> KokoroWeights:
    """Fetch config, checkpoint and voices from the hub at the pinned revision (progress bars shown).

    Raises:
        FileNotFoundError: the hub is unreachable or offline mode is on.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MissingDependencyError("downloading weights needs: pip install huggingface-hub") from None
    logger.info("repo=<%s>, revision=<%s> | downloading Kokoro-82M weights", HUB_REPO_ID, HUB_REVISION)
    try:
        root = snapshot_download(
            HUB_REPO_ID,
            revision=HUB_REVISION,
            allow_patterns=_HUB_PATTERNS,
            cache_dir=None if cache_dir is None else str(cache_dir),
        )
    except Exception as error:
        raise FileNotFoundError(
            f"no local Kokoro weights and the hub download failed ({type(error).__name__}); put "
            f"config.json, {CHECKPOINT_NAME} and voices/*.pt in the model directory"
        ) from error
    weights = local_weights(root)
    if weights is None:
        raise FileNotFoundError(f"the hub snapshot lacks config.json or {CHECKPOINT_NAME}")
    return weights


class _LockedG2P:
    """Serializes a G2P callable (spaCy is not documented as thread-safe)."""

    def __init__(self, g2p: Any) -> None:
        self._g2p = g2p
        self._lock = threading.Lock()

    def __call__(self, text: str) -> Any:
        with self._lock:
            return self._g2p(text)


class TorchEngine:
    """Kokoro-82M with ``kokoro``'s KModel/KPipeline.

    Args:
        pipeline: A ``KPipeline(lang_code='a')`` holding the model.
        voices: Voice name → ``.pt`` path.
        device: ``"cuda"`` or ``"cpu"``.
    """

    name = "torch"
    sample_rate = SAMPLE_RATE
    default_voice = KOKORO_DEFAULT_VOICE

    def __init__(self, pipeline: Any, voices: dict[str, Path], device: str) -> None:
        if not voices:
            raise ConfigurationError("the torch engine needs at least one voice (voices/*.pt)")
        self._pipeline = pipeline
        self._voice_files = dict(voices)
        self.voices = frozenset(voices)
        self.device = device
        if self.default_voice not in self.voices:
            self.default_voice = sorted(self.voices)[0]
        self._warm_up = WarmUpOnce()
        self.languages = installed_languages() | {"a"}
        self.phonemes = frozenset(getattr(pipeline.model, "vocab", {}))
        self._readers = Readers()

    @classmethod
    def load(cls, model_dir: str | Path | None = None, device: str | None = None) -> TorchEngine:
        """Load weights (local, else the hub), verify them, and build the pipeline.

        Args:
            model_dir: Weights folder; default ``$SM_MODEL_DIR`` or ``/opt/ml/model``.
            device: ``"cuda"``/``"cpu"``; default CUDA when available.

        Raises:
            FileNotFoundError: no local weights and no hub.
            CheckpointMismatchError: the checkpoint does not fit the model.
        """
        torch, kmodel_class, kpipeline_class = _import_torch()
        weights = local_weights(model_dir)
        if weights is None:
            if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}:
                raise FileNotFoundError(
                    f"no Kokoro weights in {resolve_model_dir(model_dir)} (config.json, {CHECKPOINT_NAME}) "
                    "and HF_HUB_OFFLINE is set"
                )
            weights = download_weights()
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        with warnings.catch_warnings():
            # kokoro builds 1-layer LSTMs with dropout and uses the old weight_norm: both warn, both harmless.
            warnings.filterwarnings("ignore", message=r"dropout option adds dropout", category=UserWarning)
            warnings.filterwarnings(
                "ignore", message=r".*weight_norm.* is deprecated", category=FutureWarning
            )
            model = kmodel_class(
                repo_id=HUB_REPO_ID, config=str(weights.config), model=str(weights.checkpoint)
            )
            verify_checkpoint(model, weights.checkpoint)
            model = model.to(device).eval()
            with offline_misaki_g2p():
                pipeline = kpipeline_class(lang_code="a", repo_id=HUB_REPO_ID, model=model)
        pipeline.g2p = _LockedG2P(pipeline.g2p)
        logger.info("device=<%s>, voices=<%d> | torch engine loaded", device, len(weights.voices))
        return cls(pipeline, weights.voices, device)

    def warm_up(self) -> None:
        """Synthesize one short sentence once (CUDA kernels, allocator)."""
        self._warm_up.run(lambda text: self.synthesize(text, self.default_voice, 1.0))

    def synthesize(
        self, text: str, voice: str, speed: float, reading: Reading | None = None
    ) -> Iterator[npt.NDArray[np.float32]]:
        """Yield one float32 array per segment (KPipeline's ≤510-phoneme chunks of each sentence)."""
        return audio_only(self.synthesize_timed(text, voice, speed, reading))

    def synthesize_timed(
        self, text: str, voice: str, speed: float, reading: Reading | None = None
    ) -> Iterator[SpeechSegment]:
        """Like :meth:`synthesize`, with each segment's phoneme durations (KModel's ``pred_dur``)."""
        return self._segments(text, self._voice(voice), speed, reading or Reading())

    def _voice(self, voice: str) -> Any:
        """What ``KPipeline`` takes as the voice: a ``.pt`` path, or a blend's weighted-mean style pack.

        Raises:
            ValueError: an unknown voice (or part).
        """
        path = self._voice_files.get(voice)
        if path is not None:
            return str(path)
        try:
            parts = parse_voice(voice)
        except ValueError:
            raise ValueError("unknown voice") from None
        if unknown_part(parts, self.voices) is not None:
            raise ValueError("unknown voice")
        # KPipeline caches each pack (CPU float tensors); a tensor voice is used as it is.
        packs = {
            part.name: self._pipeline.load_single_voice(str(self._voice_files[part.name])) for part in parts
        }
        total = sum(part.weight for part in parts)
        return sum(packs[part.name] * (part.weight / total) for part in parts)

    def _reader(self, lang: str) -> G2P:
        """The reader of a language, loaded on first use."""
        if lang not in self.languages:
            raise ValueError(f"unsupported language {lang!r}")
        return self._readers.get(lang)

    def _results(self, sentence: str, voice: Any, speed: float, reading: Reading) -> Iterator[Any]:
        """KPipeline's results for one sentence, read as ``reading`` says.

        American English without a lexicon is KPipeline's own reading; English with a lexicon or British
        English goes through misaki's tokens (the lexicon applied to them: timestamps keep the words);
        another language through its reader's phonemes (no tokens: no word timestamps).
        """
        if reading.lang == "a" and not reading.lexicon:
            return iter(self._pipeline(sentence, voice=voice, speed=speed, split_pattern=None))
        if reading.lang not in self.languages:
            raise ValueError(f"unsupported language {reading.lang!r}")
        phonemes, tokens = self._reader(reading.lang).with_tokens(sentence, reading.lexicon)
        if reading.lang in ENGLISH:
            return iter(self._pipeline.generate_from_tokens(tokens, voice, speed))
        pieces = split_phonemes(phonemes, MAX_PHONEMES)
        return (
            result for piece in pieces for result in self._pipeline.generate_from_tokens(piece, voice, speed)
        )

    def _segments(
        self, text: str, voice_file: Any, speed: float, reading: Reading
    ) -> Iterator[SpeechSegment]:
        vocabulary = getattr(self._pipeline.model, "vocab", {})
        text_cursor = 0
        for sentence in split_sentences(text):
            sentence_start = max(0, locate(text, sentence, text_cursor))
            text_cursor = sentence_start + 1
            for result in self._results(sentence, voice_file, speed, reading):
                audio = result.audio
                if audio is None:
                    continue
                samples = np.asarray(audio.detach().float().cpu().numpy(), dtype=np.float32).reshape(-1)
                if not samples.size:
                    continue
                timing = None
                if result.pred_dur is not None and result.tokens is not None:
                    durations = result.pred_dur.detach().cpu().numpy()
                    frames, lead = phoneme_frames(result.phonemes, durations, vocabulary)
                    tokens = g2p_tokens(result.tokens)
                    timing = SegmentTiming(
                        sentence, sentence_start, tokens, result.phonemes, frames, lead, FRAME_SAMPLES
                    )
                yield SpeechSegment(samples, timing)
