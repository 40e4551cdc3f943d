"""Kokoro's language letters and the caller's language they name (strands_voice_protocol.languages)."""

from __future__ import annotations

import pytest
from strands_voice_protocol.languages import KOKORO_LANGUAGES, answer_language, hearing_language


@pytest.mark.parametrize(
    ("spec", "code", "tag"),
    [
        ("j", "ja", "ja-JP"),
        ("ja", "ja", "ja-JP"),
        ("ja-JP", "ja", "ja-JP"),
        ("JA-jp", "ja", "ja-JP"),
        ("b", "en", "en-GB"),
        ("en-GB", "en", "en-GB"),
        ("en", "en", "en-US"),
        ("es-MX", "es", "es-MX"),  # the caller's region kept for Transcribe
        ("e", "es", "es-US"),
        ("p", "pt", "pt-BR"),
        ("z", "zh", "zh-CN"),
        ("h", "hi", "hi-IN"),
    ],
)
def test_a_letter_a_code_or_a_tag_names_one_language(spec: str, code: str, tag: str) -> None:
    language = hearing_language(spec)
    assert language is not None and (language.code, language.tag) == (code, tag)


def test_languages_kokoro_does_not_speak_are_none() -> None:
    assert [hearing_language(spec) for spec in ("de", "de-DE", "x", "", "ja_JP!")] == [None] * 5
    assert set(KOKORO_LANGUAGES) == set("abjzefhip")


def test_the_answers_language_is_lang_else_the_voices_as_the_endpoint_reads_it() -> None:
    assert answer_language("j", "jm_kumo") == "j" and answer_language(None, "ef_dora") == "e"
    # A Japanese voice without lang reads text with no kana as English; a custom or no voice reads English.
    assert answer_language(None, "jf_alpha") == "a" and answer_language(None, "custom") == "a"
    assert answer_language(None, None) == "a" and answer_language(None, "bf_emma(2)+af_sky(1)") == "b"
