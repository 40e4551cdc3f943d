"""Mandarin grapheme-to-phoneme conversion through misaki's ``zh`` module, when a deployment installs it
(``misaki[zh]``: jieba, pypinyin, cn2an; see docs/languages.md). Not in the default install."""

from __future__ import annotations

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.reading.lexicon import WordlessReader

__all__ = ["MandarinG2P"]


class MandarinG2P(WordlessReader):
    """Thread-safe Mandarin text → Kokoro phonemes (misaki ``ZHG2P``).

    Raises:
        MissingDependencyError: ``misaki[zh]`` is not installed.
    """

    def __init__(self) -> None:
        try:
            from misaki import zh  # type: ignore[import-untyped]

            g2p = zh.ZHG2P()  # Kokoro v1.0 phonemes (v1.1 is the zh model's)
        except ImportError:
            raise MissingDependencyError("Mandarin G2P needs: pip install 'misaki[zh]'") from None
        super().__init__(g2p)
