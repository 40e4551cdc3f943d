"""Endpoint settings: the limits a client shares default to the protocol's, and every bad setting raises
ConfigurationError (a StrandsVoiceError and a ValueError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from kokoro_endpoint.engines.device import engine_for_device
from kokoro_endpoint.engines.loader import choose_engine_kind
from kokoro_endpoint.engines.onnx.windows import WindowPlan
from kokoro_endpoint.engines.silence import SilencePolicy
from kokoro_endpoint.settings import Settings
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.limits import IDLE_TIMEOUT_S, MAX_SPEED, MAX_TEXT_CHARS, MIN_SPEED

BAD_SETTINGS: dict[str, Callable[[], Any]] = {
    "max_sessions": lambda: Settings(max_sessions=0),
    "clause_chars": lambda: Settings(clause_chars=0),
    "audio_frame_bytes odd": lambda: Settings(audio_frame_bytes=1001),
    "device": lambda: Settings(device="tpu"),
    "scheduling": lambda: Settings(scheduling="lifo"),
    "admission load": lambda: Settings(admission_max_load=0.0),
    "speeds": lambda: Settings(min_speed=2.0, max_speed=1.0),
    "engine kind": lambda: choose_engine_kind("tensorrt"),
    "engine device": lambda: engine_for_device("auto", "tpu"),
    "onnx on cuda": lambda: engine_for_device("onnx", "cuda"),
    "silence lead": lambda: SilencePolicy(lead_ms=-1.0),
    "silence fade": lambda: SilencePolicy(fade_ms=100.0),
    "silence threshold": lambda: SilencePolicy(threshold_dbfs=3.0),
    "silence pause": lambda: SilencePolicy(sentence_pause_ms=5001.0),
    "silence word pause": lambda: SilencePolicy(word_pause_ms=-1.0),
    "window sizes": lambda: WindowPlan(first=0),
    "window growth": lambda: WindowPlan(growth=0.5),
    "window first context": lambda: WindowPlan(first_context=-1),
}


@pytest.mark.parametrize("setting", sorted(BAD_SETTINGS))
def test_bad_endpoint_setting_raises_configuration_error(setting: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        BAD_SETTINGS[setting]()
    assert isinstance(caught.value, ValueError)
    assert str(caught.value)


def test_endpoint_limits_default_to_the_protocol_limits() -> None:
    settings = Settings()
    assert settings.max_text_chars == MAX_TEXT_CHARS
    assert (settings.min_speed, settings.max_speed) == (MIN_SPEED, MAX_SPEED)
    assert settings.idle_timeout_s == IDLE_TIMEOUT_S
