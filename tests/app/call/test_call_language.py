"""``WS /ws`` in the caller's language (PROTOCOL "The caller's language (v1.4)"), over a real socket with
the library's Listener on plain engines (a loudness VAD, scripted texts) and the in-memory TTS endpoint:
``listening`` echoes ``listen_lang``, the turn rules read that language's words (an aizuchi over a
Japanese answer lets it go on, the same words in an English call stop it), and a language the server
cannot hear leaves the call with typed turns only."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.call import Caller, scripted_listeners, silence, tone
from support.conversation_model import HOLD, HoldingEcho
from support.instant_tts import InstantTTS

pytestmark = pytest.mark.timeout(120)

AIZUCHI = "はい、なるほど。"


@pytest.fixture
def serve() -> Iterator[Callable[..., str]]:
    """``serve(model, texts) -> ws_url``: the app with scripted listening, on a free port; the call's
    ``start`` each listener was opened with is kept in ``starts``."""
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    stack: list[Any] = []

    def start(model: Any, texts: list[str], starts: list[Any]) -> str:
        opened = scripted_listeners(list(texts))

        async def listener_factory(call_start: Any) -> Any:
            starts.append(call_start)
            return await opened(call_start)

        app = create_app(
            tts_url="ws://127.0.0.1:9",
            model=model,
            conversation_store=ConversationStore(kind="none"),
            transport_factory=InstantTTS,
            listener_factory=listener_factory,
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        server = running_server(app)
        stack.append(server)
        return str(server.__enter__().base_url).replace("http://", "ws://") + "/ws"

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


def _aizuchi_over_an_answer(serve: Any, start: dict[str, Any]) -> tuple[Caller, list[Any]]:
    model, starts = HoldingEcho(), []
    url = serve(model, [HOLD, AIZUCHI], starts)

    async def call() -> Caller:
        caller = await Caller.open(url)
        await caller.send({"type": "start", **start})
        await caller.wait_for("listening")
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)
        await caller.wait_for("audio_start")
        await caller.speak(silence(0.7))  # heard audio
        await caller.speak(tone(0.6) + silence(1.6))  # はい、なるほど。 over the answer
        model.gate.set()
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    model.gate.set()
    return caller, starts


def test_an_aizuchi_over_a_japanese_answer_lets_it_go_on(serve: Any) -> None:
    caller, starts = _aizuchi_over_an_answer(serve, {"voice": "jf_alpha", "lang": "j"})
    assert caller.of("listening")[0]["listen_lang"] == "j" and starts[0].listen_lang == "j"
    assert caller.of("interrupted") == [] and len(caller.of("agent_start")) == 1
    assert [e["text"] for e in caller.of("transcript") if e["final"]] == [HOLD, AIZUCHI]


def test_the_same_words_in_an_english_call_stop_the_answer(serve: Any) -> None:
    caller, _starts = _aizuchi_over_an_answer(serve, {"voice": "jf_alpha", "listen_lang": "en-US"})
    assert caller.of("listening")[0]["listen_lang"] == "en-US"
    assert len(caller.of("interrupted")) == 1


def test_a_language_the_server_cannot_hear_leaves_typed_turns_only(serve: Any) -> None:
    starts: list[Any] = []
    url = serve(HoldingEcho(), ["never heard"], starts)

    async def call() -> Caller:
        caller = await Caller.open(url)
        await caller.send({"type": "start", "voice": "jf_alpha", "listen_lang": "de-DE"})
        await caller.wait_for("listening")
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)  # not heard: no listener
        await caller.send({"type": "prompt", "prompt": "typed"})
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    error = caller.of("error")[0]
    assert error["code"] == "unsupported_language" and "es-US" not in error["message"]
    assert "e (Spanish)" in error["message"] and "listen_lang" not in caller.of("listening")[0]
    assert starts == [] and caller.of("transcript") == [] and len(caller.of("agent_start")) == 1
