"""The page calling a deployed runtime: ``strands-voice demo --serve --runtime-arn``'s page in Chromium,
Talk pressed, the call opened on a presigned URL the local server handed out, through the SigV4-checking
stand-in of AgentCore's WebSocket data plane, to the real app's ``/ws`` (plain engines: a loudness VAD,
a scripted recognizer; Chromium's fake microphone plays speech-like sound)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.credentials import Credentials
from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY, stand_in_thread
from support.browser import SAMPLE_RATE, microphone_chromium, microphone_page, speechlike_pcm16
from support.runtime_app import ARN, runtime_app

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

QUESTION = "What does the plan cost?"
WAIT_MS = 120_000  # a hang guard on a shared CPU, not a timing assertion


@pytest.fixture(scope="module")
def mic_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from strands_voice_protocol.audio import write_wav

    path = tmp_path_factory.mktemp("mic") / "speech.wav"
    quiet = bytes(2 * SAMPLE_RATE)
    write_wav(path, quiet + speechlike_pcm16(1.5) + quiet * 8, SAMPLE_RATE)
    return path


@pytest.fixture(scope="module")
def mic_browser(chromium_path: str, mic_wav: Path) -> Iterator[Any]:
    with microphone_chromium(chromium_path, mic_wav) as instance:
        yield instance


@pytest.fixture
def runtime_page_url() -> Iterator[tuple[str, Any]]:
    """The page server for the stand-in's runtime: ``(page URL, stand-in)``."""
    from agentcore_app.app import STATIC_DIR
    from kokoro_endpoint.serving.runner import running_server
    from strands_voice_tools.runtime.page import page_app
    from strands_voice_tools.runtime.signing import Signer, runtime_target

    with runtime_app([QUESTION]) as (app_ws, _app), stand_in_thread(app_ws) as stand_in:
        target = runtime_target(ARN, endpoint_url=stand_in.endpoint_url)
        app = page_app(target, Signer(Credentials(ACCESS_KEY, SECRET_KEY)), STATIC_DIR)
        with running_server(app) as server:
            yield server.base_url + "/", stand_in


def test_talk_calls_the_runtime_through_a_presigned_url(
    mic_browser: Any, runtime_page_url: tuple[str, Any]
) -> None:
    url, stand_in = runtime_page_url
    with microphone_page(mic_browser, url) as session:
        page = session.page
        page.click("#talk")
        session.wait_for_state("listening", timeout_s=WAIT_MS / 1000)
        page.wait_for_selector("#turns li .you", timeout=WAIT_MS)
        assert page.text_content("#turns li:first-child .you") == QUESTION
        page.wait_for_function("() => window.voiceStats.chunksScheduled > 0", timeout=WAIT_MS)
        page.click("#talk")  # hang up
        session.wait_for_state("idle", timeout_s=30)
    assert stand_in.refused == []
    conversation = stand_in.sessions
    assert len(conversation) == 1 and len(conversation[0]) >= 33
