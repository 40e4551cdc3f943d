"""The example app as a deployed runtime's container, for the tests of the clients of AgentCore's ``/ws``.

:func:`runtime_app` serves the real app (``create_app``) on 127.0.0.1:<free port> with plain engines: the
library's Listener with a loudness VAD and scripted texts (:func:`support.call.scripted_listeners`: a tone
is speech, its turn ends by the silence timer), :class:`~support.conversation_model.HoldingEcho` as the
model (the answer says what it was asked) and the in-memory TTS (:class:`~support.instant_tts.InstantTTS`).
:func:`spoken_runtime_app` is the app as deployed (its Whisper listener, a real endpoint).
:func:`aws_env` points the default AWS credential chain and ``AWS_ENDPOINT_URL_BEDROCK_AGENTCORE`` at a
stand-in (:mod:`support.agentcore_stand_in`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any, Final

import pytest

from support.agentcore_stand_in import ACCESS_KEY, SECRET_KEY
from support.call import scripted_listeners

ARN: Final = "arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/voice_agent-Ab12Cd34Ef"


@contextlib.contextmanager
def runtime_app(texts: list[str], model: Any = None) -> Iterator[tuple[str, Any]]:
    """The app's ``/ws`` URL (``ws://127.0.0.1:<port>/ws``) and the app, while it serves."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    from support.conversation_model import HoldingEcho
    from support.instant_tts import InstantTTS

    app = create_app(
        tts_url="ws://127.0.0.1:9",
        model=model or HoldingEcho(),
        conversation_store=ConversationStore(kind="none"),
        transport_factory=InstantTTS,
        listener_factory=scripted_listeners(list(texts)),
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield str(server.base_url).replace("http://", "ws://") + "/ws", app


@contextlib.contextmanager
def spoken_runtime_app(tts_url: str, answer: str) -> Iterator[str]:
    """The real app as it is deployed (its default listener: Silero VAD, faster-whisper; the endpoint at
    ``tts_url``; the scripted model answering ``answer``): its ``/ws`` URL. Needs the ``listen`` group."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    app = create_app(
        tts_url=tts_url,
        model=ScriptedModel(text=answer, first_sentence_s=0.3, total_s=0.5),
        conversation_store=ConversationStore(kind="none"),
        silence_timeout=120.0,
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield str(server.base_url).replace("http://", "ws://") + "/ws"


def aws_env(monkeypatch: pytest.MonkeyPatch, endpoint_url: str, secret: str = SECRET_KEY) -> None:
    """Credentials (the stand-in's key, with ``secret``) and the data plane endpoint, from the environment."""
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_AGENTCORE", endpoint_url)
