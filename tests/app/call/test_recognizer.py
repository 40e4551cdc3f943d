"""The spoken call's recognizer, from ``CALL_RECOGNIZER``: Whisper by default, Amazon Transcribe if asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentcore_app.config import ConfigurationError, RecognizerChoice, call_recognizer_from_env
from agentcore_app.payload import CallStart
from optional_groups import require

from strands_voice import VoiceOptions


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, RecognizerChoice("whisper", None)),
        ("", RecognizerChoice("whisper", None)),
        ("whisper", RecognizerChoice("whisper", None)),
        ("transcribe", RecognizerChoice("transcribe", None)),
        ("transcribe:ja-JP", RecognizerChoice("transcribe", "ja-JP")),
    ],
)
def test_the_call_recognizer_is_read_from_the_environment(
    value: str | None, expected: RecognizerChoice
) -> None:
    env = {} if value is None else {"CALL_RECOGNIZER": value}
    assert call_recognizer_from_env(env) == expected


@pytest.mark.parametrize("value", ["vosk", "whisper:en", "transcribe-ja"])
def test_an_unknown_call_recognizer_is_a_configuration_error(value: str) -> None:
    with pytest.raises(ConfigurationError, match="CALL_RECOGNIZER"):
        call_recognizer_from_env({"CALL_RECOGNIZER": value})


def test_transcribe_is_made_once_and_hears_each_calls_language(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The factory makes one Transcribe recognizer (the call's rate) for all calls, each call heard in the
    chosen language, else in its own."""
    require("aws_sdk_transcribe_streaming", "listen")
    require("faster_whisper", "listen")
    from agentcore_app.call import default_listener_factory

    from strands_voice.listen import TranscribeRecognizer

    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    fixed, per_call = (
        default_listener_factory(RecognizerChoice("transcribe", "ja-JP")),
        default_listener_factory(RecognizerChoice("transcribe")),
    )
    english = CallStart(options=VoiceOptions(), sample_rate=16000)
    spanish = CallStart(options=VoiceOptions(), sample_rate=16000, listen_lang="e")

    async def calls() -> list[TranscribeRecognizer]:
        opened = [await fixed(english), await fixed(spanish)]
        opened += [await per_call(english), await per_call(spanish)]
        return [listener.recognizer for listener in opened]  # type: ignore[attr-defined]

    first, second, third, fourth = asyncio.run(calls())
    assert all(isinstance(recognizer, TranscribeRecognizer) for recognizer in (first, second, third, fourth))
    # Made once per factory (its region and credentials found once), each call in its language.
    assert first._overrides is second._overrides and third._overrides is fourth._overrides
    assert [r.language_code for r in (first, second, third, fourth)] == ["ja-JP", "ja-JP", "en-US", "es-US"]
    assert first.sample_rate == 16000
