"""Every bad library setting raises ConfigurationError (a StrandsVoiceError and a ValueError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from strands_voice_protocol.errors import ConfigurationError

from strands_voice import VoiceCallbackHandler, VoiceOptions, run_voice
from strands_voice.session._retry import RetryPolicy
from strands_voice.speech._event_queue import EventQueue
from strands_voice.speech._options import request_options
from strands_voice.transports._url import transport_from_url
from strands_voice.transports.sagemaker import SageMakerTransport, parse_sagemaker_url

BAD_SETTINGS: dict[str, Callable[[], Any]] = {
    "mode": lambda: VoiceOptions(mode="loud"),  # type: ignore[arg-type]
    "format": lambda: VoiceOptions(format="flac"),
    "retry delays": lambda: RetryPolicy(initial_delay_s=10.0, max_delay_s=1.0),
    "retry multiplier": lambda: RetryPolicy(multiplier=0.5),
    "url scheme": lambda: transport_from_url("ftp://127.0.0.1:8080"),
    "sagemaker url path": lambda: transport_from_url("sagemaker://kokoro/extra"),
    "sagemaker url option": lambda: parse_sagemaker_url("sagemaker://kokoro?colour=blue"),
    "sagemaker endpoint name": lambda: SageMakerTransport("not_a_valid_name!"),
    "handler without url": lambda: VoiceCallbackHandler(),
    "handler queue": lambda: VoiceCallbackHandler("ws://127.0.0.1:1", max_queued_events=0),
    "event queue": lambda: EventQueue(0),
    "run_voice without url": lambda: run_voice(None, "hi"),  # type: ignore[arg-type]
    "request options": lambda: request_options({"mode": "batch"}, VoiceOptions()),
}


@pytest.mark.parametrize("setting", sorted(BAD_SETTINGS))
def test_bad_setting_raises_configuration_error(setting: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        BAD_SETTINGS[setting]()
    assert isinstance(caught.value, ValueError)  # code that caught ValueError still does
    assert str(caught.value)  # a message for a person
