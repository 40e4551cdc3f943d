"""The barge-in probe (``python -m strands_voice_tools.bench.barge_in``) on the real endpoint: one trial."""

from __future__ import annotations

from typing import Any

import pytest
from strands_voice_tools.bench.barge_in import run_stream_trial, run_trial

pytestmark = pytest.mark.timeout(240)


def test_one_barge_in_trial_stops_speech_and_model(endpoint_server: Any) -> None:
    trial = run_trial(endpoint_server.ws_url, after_chunks=2)
    assert trial.stop_reason == "cancelled"  # the model's stream ended by the cancel, not by itself
    # Figures are measured, not asserted against a bound; they must be consistent.
    assert trial.last_audio_ms >= 0 and trial.audio_end_ms >= 0 and trial.model_stop_ms >= 0
    assert trial.remembered  # the heard text, or the ellipsis when nothing was heard


def test_one_barge_in_trial_under_stream(endpoint_server: Any) -> None:
    trial = run_stream_trial(endpoint_server.ws_url, after_chunks=2)
    assert trial.stream_end_ms is not None and trial.stream_end_ms >= trial.audio_end_ms >= 0
    assert trial.model_stop_ms >= 0 and trial.remembered
