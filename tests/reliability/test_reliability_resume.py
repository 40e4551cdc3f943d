"""Seamless resume over WebSocket: the REAL endpoint process killed mid-sentence and restarted.

The session resumes the cut request with ``skip_samples``; what a naive player plays (every audio chunk)
equals the undisturbed run sample for sample outside 20 ms around the seam (docs/reliability.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from support.endpoint_process import EndpointProcess, free_port
from support.resume import check_seamless, kill_and_restart, resumed_skip_samples, run, speak

from strands_voice.transports._websocket import WebSocketTransport


@pytest.mark.timeout(900)  # two endpoint process start-ups on a shared CPU
def test_reliability_resume_endpoint_killed_mid_sentence_websocket_is_seamless(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: dict[str, Any]
) -> None:
    endpoint = EndpointProcess(free_port(), tmp_path / "endpoint.log")
    try:
        endpoint.start()
        reference = run(speak(WebSocketTransport(endpoint.ws_url)), timeout=300)
        with caplog.at_level(logging.DEBUG, logger="strands_voice.session"):
            resumed = run(speak(WebSocketTransport(endpoint.ws_url), kill_and_restart(endpoint)), timeout=600)
    finally:
        endpoint.stop()
    differing = check_seamless(reference, resumed, resumed_skip_samples(caplog.records))
    figures["resume_websocket_differing_samples"] = differing
    figures["resume_websocket_audio_s"] = round(len(reference.pcm) / 48_000, 2)
