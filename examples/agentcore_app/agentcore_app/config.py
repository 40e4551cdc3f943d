"""The app's configuration, read from the environment (the way AgentCore Runtime passes it)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from strands_voice_protocol.errors import ConfigurationError

from agentcore_app.models import default_model_spec
from strands_voice.transports import normalize_tts_url

__all__ = [
    "DEFAULT_SILENCE_TIMEOUT_S",
    "DEFAULT_SYSTEM_PROMPT",
    "ConfigurationError",
    "RecognizerChoice",
    "call_recognizer_from_env",
    "model_spec_from_env",
    "normalize_tts_url",
    "silence_timeout_from_env",
    "system_prompt_from_env",
    "tts_url_from_env",
]

DEFAULT_SILENCE_TIMEOUT_S = 20.0

DEFAULT_SYSTEM_PROMPT = (
    "You are a friendly voice assistant. Your answers are read aloud, so write plain spoken sentences: "
    "no Markdown, no tables, no code blocks, no emoji. Open with a short first sentence that answers "
    "the question, then add detail. Keep answers under about 150 words unless asked for more."
)


def tts_url_from_env(environ: Mapping[str, str] | None = None) -> str:
    """``TTS_ENDPOINT_URL``.

    Raises:
        ConfigurationError: It is not set.
    """
    env = os.environ if environ is None else environ
    tts_url = env.get("TTS_ENDPOINT_URL", "").strip()
    if not tts_url:
        raise ConfigurationError(
            "TTS_ENDPOINT_URL is not set: give the TTS endpoint as ws://host:port/"
            "invocations-bidirectional-stream or sagemaker://<endpoint-name>"
        )
    return normalize_tts_url(tts_url)


def model_spec_from_env(environ: Mapping[str, str] | None = None) -> str:
    """``VOICE_MODEL``, else ``bedrock:$BEDROCK_MODEL_ID``, else Bedrock with credentials, else scripted."""
    env = os.environ if environ is None else environ
    model_spec = env.get("VOICE_MODEL", "").strip()
    if model_spec:
        return model_spec
    bedrock_model_id = env.get("BEDROCK_MODEL_ID", "").strip()
    return f"bedrock:{bedrock_model_id}" if bedrock_model_id else default_model_spec()


def system_prompt_from_env(environ: Mapping[str, str] | None = None) -> str:
    """``SYSTEM_PROMPT``, or :data:`DEFAULT_SYSTEM_PROMPT`."""
    env = os.environ if environ is None else environ
    return env.get("SYSTEM_PROMPT", "").strip() or DEFAULT_SYSTEM_PROMPT


def silence_timeout_from_env(environ: Mapping[str, str] | None = None) -> float:
    """``TTS_SILENCE_TIMEOUT_S`` (seconds the endpoint may stay silent while audio is owed), default 20.

    Raises:
        ConfigurationError: It is not a positive number.
    """
    env = os.environ if environ is None else environ
    return positive_from_env(env, "TTS_SILENCE_TIMEOUT_S", DEFAULT_SILENCE_TIMEOUT_S, unit=" of seconds")


def call_speculate_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``CALL_SPECULATE``: ``on`` (default: a spoken turn's answer starts, held, at a pause whose words
    look finished) or ``off`` (it starts when the turn ends).

    Raises:
        ConfigurationError: Another value.
    """
    env = os.environ if environ is None else environ
    raw = env.get("CALL_SPECULATE", "").strip().lower()
    if raw not in ("", "on", "off"):
        raise ConfigurationError(f"CALL_SPECULATE must be on or off, got {raw!r}")
    return raw != "off"


@dataclass(frozen=True)
class RecognizerChoice:
    """The spoken call's recognizer: ``whisper`` (offline, on the app's CPU) or ``transcribe`` (Amazon
    Transcribe streaming); in ``language`` when given, else in each call's ``listen_lang``."""

    kind: str = "whisper"
    language: str | None = None


def call_recognizer_from_env(environ: Mapping[str, str] | None = None) -> RecognizerChoice:
    """``CALL_RECOGNIZER``: ``whisper`` (default), ``transcribe`` or ``transcribe:<language>`` (``ja-JP``:
    every call in that language; without it each call is heard in its ``listen_lang``).

    Raises:
        ConfigurationError: Another value.
    """
    env = os.environ if environ is None else environ
    raw = env.get("CALL_RECOGNIZER", "").strip()
    kind, _, language = raw.partition(":")
    if kind in ("", "whisper") and not language:
        return RecognizerChoice()
    if kind == "transcribe":
        return RecognizerChoice("transcribe", language or None)
    raise ConfigurationError(
        f"CALL_RECOGNIZER={raw!r}: use whisper (offline, the default), transcribe or transcribe:<language>"
    )


def positive_from_env(env: Mapping[str, str], name: str, default: float, *, unit: str = "") -> float:
    """The positive finite number in ``env[name]``, or ``default`` when it is unset or blank.

    Raises:
        ConfigurationError: It is set and not a positive number (``unit`` words the message).
    """
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise ConfigurationError(f"{name} must be a positive number{unit} (got {raw!r})")
    return value
