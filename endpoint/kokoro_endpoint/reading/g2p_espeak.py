"""Grapheme-to-phoneme conversion through espeak-ng (misaki's ``EspeakG2P``), the way Kokoro's own
pipeline reads Spanish, French, Hindi, Italian and Brazilian Portuguese. espeak-ng comes from the
``espeakng-loader`` wheel (already there for English's out-of-lexicon words), so these work offline."""

from __future__ import annotations

from typing import Final

from strands_voice_protocol.errors import MissingDependencyError

from kokoro_endpoint.reading.lexicon import WordlessReader

__all__ = ["ESPEAK_LANGUAGES", "EspeakG2P"]

#: Kokoro language letter → espeak-ng voice (as ``kokoro.KPipeline`` maps them).
ESPEAK_LANGUAGES: Final[dict[str, str]] = {"e": "es", "f": "fr-fr", "h": "hi", "i": "it", "p": "pt-br"}


class EspeakG2P(WordlessReader):
    """Thread-safe text → Kokoro phonemes for one of :data:`ESPEAK_LANGUAGES`.

    Raises:
        MissingDependencyError: misaki's espeak support (phonemizer-fork, espeakng-loader) is missing.
    """

    def __init__(self, lang: str) -> None:
        try:
            from misaki import espeak  # type: ignore[import-untyped]

            g2p = espeak.EspeakG2P(language=ESPEAK_LANGUAGES[lang])
        except ImportError:
            raise MissingDependencyError(
                "this language needs espeak-ng: pip install phonemizer-fork espeakng-loader"
            ) from None
        super().__init__(g2p)
