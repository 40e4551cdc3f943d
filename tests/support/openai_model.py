"""A real model's client in tests: Strands' ``OpenAIModel`` against the OpenAI-compatible stand-in server.

:func:`served_openai_model` serves a :class:`~agentcore_app.scripted.ScriptedModel` as a local
OpenAI-compatible streaming server (:mod:`strands_voice_tools.openai_stand_in`) and gives the
``OpenAIModel`` that talks to it, with the server's request log; :func:`served_openai_spec` names it by the
app's model spec instead (the app makes its own model, whose client stays open between requests). Unlike a
``Model`` in the same process, that model never sees the agent's cancel signal: its tokens come over HTTP,
from a stream its client library owns.

:class:`PausingModel` answers the first question with :data:`FIRST`, then :data:`THEN`, then pauses, as a
real model does while it thinks, writes a tool call's arguments (which ``OpenAIModel`` gathers without
passing any on) or waits for its server; :class:`WritingModel` writes its whole first answer (:data:`FIRST`
and :data:`SECOND`) at once. Both answer every later question with :data:`SHORT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import AsyncIterable, Iterator
from typing import Any, Final
from unittest import mock

from agentcore_app.scripted import ScriptedModel, ScriptedModelConfig
from strands.models.openai import OpenAIModel
from strands.types.content import Messages
from strands.types.streaming import StreamEvent
from strands_voice_tools.openai_stand_in import STAND_IN_MODEL_ID, StandInLog, openai_stand_in_app

#: The first answer's first sentence: over the chunker's 40-character minimum, so it is spoken alone.
FIRST: Final = "This first sentence is long enough to be spoken on its own."
#: The word after it (it ends the first sentence for the chunker), before the pause.
THEN: Final = "Then"
#: What the first answer says once its pause is over (never, when the agent is stopped).
TAIL: Final = "the rest of the answer, much later."
#: The first answer's second sentence, in :class:`WritingModel`'s answer.
SECOND: Final = "And this second sentence is never heard by the caller."
#: The answer to every later question.
SHORT: Final = "Okay."
#: The stand-in takes any key.
NOT_A_KEY: Final = "not-a-key"
#: Seconds a pause lasts at most (a hang guard: far longer than any test waits).
PAUSE_GUARD_S: Final = 120.0


def user_turns(messages: Messages) -> int:
    """How many user messages the conversation holds."""
    return sum(message["role"] == "user" for message in messages)


class PausingModel(ScriptedModel):
    """Answers the first question with ``FIRST THEN``, pauses until ``resume`` is set, then ``TAIL``;
    every later question gets ``SHORT`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(text=SHORT)
        self.resume = threading.Event()

    async def stream(
        self,
        messages: Messages,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockStart": {"start": {}}}
        if user_turns(messages) > 1:
            yield {"contentBlockDelta": {"delta": {"text": SHORT}}}
        else:
            for word in f"{FIRST} {THEN} ".split(" "):
                yield {"contentBlockDelta": {"delta": {"text": word + " "}}}
                await asyncio.sleep(0.01)
            deadline = time.monotonic() + PAUSE_GUARD_S
            while not self.resume.is_set() and time.monotonic() < deadline:  # noqa: ASYNC110 (a thread's event)
                await asyncio.sleep(0.02)
            yield {"contentBlockDelta": {"delta": {"text": TAIL}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


class WritingModel(ScriptedModel):
    """Writes its first answer, ``FIRST SECOND``, in a tenth of a second; later questions get ``SHORT``."""

    def __init__(self) -> None:
        super().__init__(text=f"{FIRST} {SECOND}", first_sentence_s=0.05, total_s=0.1)

    def script_for(self, messages: Messages) -> ScriptedModelConfig:
        script = self.get_config()
        return {**script, "text": SHORT} if user_turns(messages) > 1 else script


#: The two states of an answer the app's barge-in tests stop it in.
PAUSED: Final = "paused mid-answer"  # the model is still writing, and sends nothing for a while
WRITTEN: Final = "written, audio owed"  # the model wrote it all; the endpoint still makes the audio
STATES: Final = [PAUSED, WRITTEN]


@contextlib.contextmanager
def app_on_openai_model(state: str, **settings: Any) -> Iterator[tuple[str, StandInLog]]:
    """The example app on a free port, its agent on the app's own ``OpenAIModel`` (from its spec); its base
    URL and the model's log.

    The model is a :class:`PausingModel` (``PAUSED``) or a :class:`WritingModel` (``WRITTEN``); the
    in-memory TTS endpoint holds every answer's second sentence until the app stops; nothing is stored.

    Args:
        state: One of ``STATES``.
        **settings: More of ``create_app``'s arguments (a listener factory, ...).
    """
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    from support.instant_tts import InstantTTS

    model = PausingModel() if state == PAUSED else WritingModel()
    release = threading.Event()
    with served_openai_spec(model) as (spec, log):
        try:
            app = create_app(
                tts_url="ws://127.0.0.1:9",
                model=spec,
                conversation_store=ConversationStore(kind="none"),
                transport_factory=functools.partial(InstantTTS, answer_first=1, release=release),
                **settings,
            )
            logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
            with running_server(app) as server:
                yield server.base_url, log
        finally:
            release.set()
            if isinstance(model, PausingModel):
                model.resume.set()  # an unstopped pause must not hold the model server's shutdown


@contextlib.contextmanager
def served_openai_model(model: ScriptedModel) -> Iterator[tuple[OpenAIModel, StandInLog]]:
    """``OpenAIModel`` talking to ``model`` served as an OpenAI-compatible server; the server's log."""
    with served_stand_in(model) as (base_url, log):
        client_args = {"base_url": base_url, "api_key": NOT_A_KEY}
        yield OpenAIModel(client_args=client_args, model_id=STAND_IN_MODEL_ID), log


@contextlib.contextmanager
def served_openai_spec(model: ScriptedModel) -> Iterator[tuple[str, StandInLog]]:
    """``model`` served as an OpenAI-compatible server, named by the app's model spec (``openai:...``, the
    key in ``OPENAI_API_KEY`` meanwhile): an app given it makes its own model (its client kept open,
    closed at the app's shutdown); the server's log."""
    key = {"OPENAI_API_KEY": NOT_A_KEY}
    with served_stand_in(model) as (base_url, log), mock.patch.dict(os.environ, key):
        yield f"openai:{STAND_IN_MODEL_ID}?base_url={base_url}", log


@contextlib.contextmanager
def served_stand_in(model: ScriptedModel) -> Iterator[tuple[str, StandInLog]]:
    """``model`` served as an OpenAI-compatible server: its base URL (``.../v1``) and its request log."""
    from kokoro_endpoint.serving.runner import running_server

    log = StandInLog()
    with running_server(openai_stand_in_app(model, log)) as server:
        yield f"{server.base_url}/v1", log
