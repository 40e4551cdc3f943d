"""Mandarin grapheme-to-phoneme conversion through misaki's ``zh`` module, when a deployment installs it
(``misaki[zh]``: jieba, pypinyin, cn2an; see docs/languages.md). Not in the default install."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.lexicon import phonemize_with_lexicon

__all__ = ["MandarinG2P"]


class MandarinG2P:
    """Thread-safe Mandarin text → Kokoro phonemes (misaki ``ZHG2P``).

    Raises:
        MissingDependencyError: ``misaki[zh]`` is not installed.
    """

    def __init__(self) -> None:
        try:
            from misaki import zh  # type: ignore[import-untyped]

            self._g2p = zh.ZHG2P()  # Kokoro v1.0 phonemes (v1.1 is the zh model's)
        except ImportError:
            raise MissingDependencyError("Mandarin G2P needs: pip install 'misaki[zh]'") from None
        self._lock = threading.Lock()

    def _phonemize(self, text: str) -> str:
        with self._lock:
            phonemes, _ = self._g2p(text)
        return str(phonemes or "")

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence (no tokens)."""
        return phonemize_with_lexicon(text, lexicon or {}, self._phonemize), []
