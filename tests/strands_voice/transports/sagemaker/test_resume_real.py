"""Seamless resume over the SageMaker transport: the REAL CRT client through the local TLS HTTP/2 front
(hypercorn, tests/support/fake_sagemaker_runtime.py) to the REAL endpoint process, which is killed
mid-sentence and restarted. The front ends the stream with ``ModelStreamError`` as SageMaker does when the
container dies; the session resumes the cut request with ``skip_samples`` on a new stream.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from support.endpoint_process import EndpointProcess, free_port
from support.fake_sagemaker_runtime import DUMMY_SECRET, TLSFiles, create_forwarding_app, serve_tls
from support.resume import check_seamless, kill_and_restart, resumed_skip_samples, run, speak

from strands_voice.transports.sagemaker import SageMakerTransport


@pytest.mark.timeout(900)  # two endpoint process start-ups on a shared CPU
def test_sagemaker_resume_endpoint_killed_mid_sentence_is_seamless(
    tmp_path: Path,
    tls_files: TLSFiles,
    aws_env: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", tls_files.ca_file)  # the CRT client trusts the throwaway CA
    endpoint = EndpointProcess(free_port(), tmp_path / "endpoint.log")
    stats: dict[str, object] = {}
    try:
        endpoint.start()
        app = create_forwarding_app(endpoint.ws_url, secret_key=DUMMY_SECRET, stats=stats)
        with serve_tls(app, tls_files.cert_file, tls_files.key_file) as port:
            url = f"sagemaker://kokoro-tts?region=us-east-1&endpoint_url=https://localhost:{port}"
            reference = run(speak(SageMakerTransport.from_url(url)), timeout=300)
            with caplog.at_level(logging.DEBUG, logger="strands_voice.session"):
                fault = kill_and_restart(endpoint)
                resumed = run(speak(SageMakerTransport.from_url(url), fault), timeout=600)
    finally:
        endpoint.stop()
    skips = resumed_skip_samples(caplog.records)
    check_seamless(reference, resumed, skips)
    parts = stats["parts_in"]
    assert isinstance(parts, list)
    sent = [json.loads(part.data) for part in parts]
    resent = [m for m in sent if m["type"] == "synthesize" and m.get("skip_samples") is not None]
    assert [m["skip_samples"] for m in resent] == skips  # the resumed request went out over SageMaker
    assert stats["bad_signatures"] == 0
