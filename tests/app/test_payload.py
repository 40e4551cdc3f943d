"""The Leg 3 payload validator and the app's environment configuration."""

from __future__ import annotations

from typing import Any

import pytest
from agentcore_app.config import (
    DEFAULT_SYSTEM_PROMPT,
    ConfigurationError,
    model_spec_from_env,
    normalize_tts_url,
    silence_timeout_from_env,
    system_prompt_from_env,
    tts_url_from_env,
)
from agentcore_app.payload import PayloadError, VoiceRequest, parse_payload
from strands_voice_protocol.limits import MAX_SPEED, MIN_SPEED

from strands_voice.speech._options import VoiceOptions


def test_app_payload_defaults() -> None:
    assert parse_payload({"prompt": "  Hi there  "}) == VoiceRequest(prompt="Hi there")


def test_app_payload_all_fields() -> None:
    request = parse_payload(
        {"prompt": "Hi", "mode": "batch", "voice": "af_heart", "speed": 1.25, "format": "mp3"}
    )
    options = VoiceOptions(mode="batch", voice="af_heart", speed=1.25, format="mp3", normalize=True)
    assert request == VoiceRequest(prompt="Hi", options=options)


def test_app_payload_blends_languages_and_lexicons() -> None:
    request = parse_payload(
        {
            "prompt": "Hi",
            "voice": "af_bella(2)+af_sky(1)",
            "lang": "j",
            "lexicon": {"Kokoro": "kˈOkəɹO"},
            "format": "mulaw",
        }
    )
    options = VoiceOptions(
        voice="af_bella(2)+af_sky(1)",
        lang="j",
        lexicon={"Kokoro": "kˈOkəɹO"},
        format="mulaw",
        normalize=True,
    )
    assert request == VoiceRequest(prompt="Hi", options=options)
    assert parse_payload({"prompt": "Hi", "voice": "a+b", "format": "alaw"}).options.voice == "a+b"


def test_app_payload_null_fields_take_defaults() -> None:
    request = parse_payload({"prompt": "Hi", "mode": None, "voice": None, "speed": None, "format": None})
    assert request == VoiceRequest(prompt="Hi")


def test_app_payload_integer_speed_is_a_float() -> None:
    request = parse_payload({"prompt": "Hi", "speed": 1})
    assert request.options.speed == 1.0
    assert isinstance(request.options.speed, float)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ([], "JSON object"),
        ("hello", "JSON object"),
        (None, "JSON object"),
        ({}, "'prompt'"),
        ({"prompt": ""}, "'prompt'"),
        ({"prompt": "   "}, "'prompt'"),
        ({"prompt": 42}, "'prompt'"),
        ({"prompt": ["a"]}, "'prompt'"),
        ({"prompt": "x" * 9000}, "too long"),
        ({"prompt": "Hi", "mode": "stream"}, "'mode'"),
        ({"prompt": "Hi", "mode": 1}, "'mode'"),
        ({"prompt": "Hi", "voice": ""}, "'voice'"),
        ({"prompt": "Hi", "voice": 3}, "'voice'"),
        ({"prompt": "Hi", "voice": "../../etc/passwd"}, "'voice'"),
        ({"prompt": "Hi", "speed": "fast"}, "'speed'"),
        ({"prompt": "Hi", "speed": True}, "'speed'"),
        ({"prompt": "Hi", "speed": 0.1}, "'speed'"),
        ({"prompt": "Hi", "speed": 9}, "'speed'"),
        ({"prompt": "Hi", "speed": float("nan")}, "'speed'"),
        ({"prompt": "Hi", "format": "flac"}, "'format'"),
        ({"prompt": "Hi", "format": ["mp3"]}, "'format'"),
        ({"prompt": "Hi", "voise": "af_heart"}, "'voise'"),
        ({"prompt": "Hi", "voice": "a++b"}, "'voice'"),
        ({"prompt": "Hi", "voice": "a(two)"}, "'voice'"),
        ({"prompt": "Hi", "lang": "ja"}, "'lang'"),
        ({"prompt": "Hi", "lang": 1}, "'lang'"),
        ({"prompt": "Hi", "lexicon": ["Kokoro"]}, "'lexicon'"),
        ({"prompt": "Hi", "lexicon": {"Kokoro": 1}}, "'lexicon'"),
    ],
)
def test_app_payload_rejects(payload: Any, field: str) -> None:
    with pytest.raises(PayloadError) as caught:
        parse_payload(payload)
    assert field in caught.value.message


def test_app_payload_speed_range_is_the_protocols() -> None:
    # The app accepts exactly the range the endpoint does: both read strands_voice_protocol.limits.
    assert parse_payload({"prompt": "Hi", "speed": MIN_SPEED}).options.speed == MIN_SPEED
    assert parse_payload({"prompt": "Hi", "speed": MAX_SPEED}).options.speed == MAX_SPEED
    for outside in (MIN_SPEED - 0.01, MAX_SPEED + 0.01):
        with pytest.raises(PayloadError, match="'speed'"):
            parse_payload({"prompt": "Hi", "speed": outside})


def test_app_payload_prompt_limit_is_configurable() -> None:
    assert parse_payload({"prompt": "abcd"}, max_prompt_chars=4).prompt == "abcd"
    with pytest.raises(PayloadError, match="at most 3"):
        parse_payload({"prompt": "abcd"}, max_prompt_chars=3)


def test_app_config_reads_the_environment() -> None:
    env = {
        "TTS_ENDPOINT_URL": " sagemaker://kokoro?region=us-east-1 ",
        "VOICE_MODEL": "scripted",
        "SYSTEM_PROMPT": "Be brief.",
    }
    assert tts_url_from_env(env) == "sagemaker://kokoro?region=us-east-1"
    assert model_spec_from_env(env) == "scripted"
    assert system_prompt_from_env(env) == "Be brief."


def test_app_config_bedrock_model_id_and_default_prompt() -> None:
    env = {"TTS_ENDPOINT_URL": "ws://tts:8080", "BEDROCK_MODEL_ID": "amazon.nova-lite-v1:0"}
    assert model_spec_from_env(env) == "bedrock:amazon.nova-lite-v1:0"
    assert system_prompt_from_env(env) == DEFAULT_SYSTEM_PROMPT
    # VOICE_MODEL wins over BEDROCK_MODEL_ID.
    assert (
        model_spec_from_env({"VOICE_MODEL": "ollama:llama3.2", "BEDROCK_MODEL_ID": "x"}) == "ollama:llama3.2"
    )


def test_app_config_needs_a_tts_url() -> None:
    with pytest.raises(ConfigurationError, match="TTS_ENDPOINT_URL"):
        tts_url_from_env({"VOICE_MODEL": "scripted"})


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ws://127.0.0.1:8081", "ws://127.0.0.1:8081/invocations-bidirectional-stream"),
        ("ws://127.0.0.1:8081/", "ws://127.0.0.1:8081/invocations-bidirectional-stream"),
        ("wss://tts.example.com/custom", "wss://tts.example.com/custom"),
        ("http://127.0.0.1:8081", "ws://127.0.0.1:8081/invocations-bidirectional-stream"),
        ("https://tts.example.com/custom", "wss://tts.example.com/custom"),
        ("sagemaker://kokoro-tts?region=us-west-2", "sagemaker://kokoro-tts?region=us-west-2"),
    ],
)
def test_app_config_normalizes_tts_urls(url: str, expected: str) -> None:
    assert normalize_tts_url(url) == expected


@pytest.mark.parametrize("url", ["ftp://x", "kokoro:8080", "ws://", "sagemaker://"])
def test_app_config_rejects_bad_tts_urls(url: str) -> None:
    with pytest.raises(ConfigurationError, match="TTS endpoint URL"):
        normalize_tts_url(url)


def test_app_config_silence_timeout() -> None:
    assert silence_timeout_from_env({}) == 20.0
    assert silence_timeout_from_env({"TTS_SILENCE_TIMEOUT_S": "45.5"}) == 45.5
    for bad in ("0", "-3", "soon", "inf", "nan"):
        with pytest.raises(ConfigurationError, match="TTS_SILENCE_TIMEOUT_S"):
            silence_timeout_from_env({"TTS_SILENCE_TIMEOUT_S": bad})
