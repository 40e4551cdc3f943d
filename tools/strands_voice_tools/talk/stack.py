"""What ``talk`` and ``bench --talk`` run on: the real endpoint on loopback and a ``VoiceCascade`` agent."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from strands.bidi import BidiAgent
from strands.models.model import Model

from strands_voice import VoiceOptions
from strands_voice.cascade import VoiceCascade
from strands_voice.listen import ListenSettings, Recognizer, hearing_language_of
from strands_voice.turns import TurnSettings

__all__ = ["TalkStack", "running_endpoint", "talk_stack", "voice_agent"]

DEFAULT_VOICE = "jm_kumo"  # the offline packs' English-speaking voice
SYSTEM_PROMPT = (
    "You are a helpful voice assistant. Answer in a few short spoken sentences, in the caller's language."
)


@dataclass
class TalkStack:
    """The running pieces.

    Attributes:
        engine: The Kokoro engine the endpoint serves (also speaks the bench's questions); None when the
            stack speaks through an endpoint given by URL.
        tts_url: The endpoint's Leg 1 URL.
        cascade: The agent's model.
        agent: The ``BidiAgent``.
    """

    engine: Any
    tts_url: str
    cascade: VoiceCascade
    agent: BidiAgent


@contextlib.contextmanager
def running_endpoint(tts_url: str | None = None) -> Iterator[tuple[Any, str]]:
    """Load the ONNX engine and serve the endpoint on 127.0.0.1 (unless ``tts_url``): ``(engine, url)``."""
    from kokoro_endpoint.serving.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    from strands_voice_tools.demo import load_tts_engine

    if tts_url is not None:
        yield None, tts_url
        return
    engine = load_tts_engine()
    with running_server(create_app(engine=engine)) as server:
        yield engine, server.ws_url


def voice_agent(
    model: Model,
    tts_url: str,
    *,
    voice: str = DEFAULT_VOICE,
    lang: str | None = None,
    settings: ListenSettings | None = None,
    recognizer: Recognizer | None = None,
    tools: list[Any] | None = None,
    speculate: bool = True,
) -> tuple[VoiceCascade, BidiAgent]:
    """A ``VoiceCascade`` speaking through ``tts_url`` and the ``BidiAgent`` that runs it; ``lang`` (a
    Kokoro letter) is the language of its voice and of its ears (None: the voice's, as the endpoint reads
    it); ``speculate``: an answer starts, held, at a pause whose words look finished."""
    language = settings.language if settings is not None else hearing_language_of(lang, voice)
    cascade = VoiceCascade(
        model,
        tts_url,
        options=VoiceOptions(voice=voice, lang=lang),
        settings=settings,
        recognizer=recognizer,
        turn_settings=TurnSettings(language=language, speculate=speculate),
    )
    return cascade, BidiAgent(model=cascade, tools=tools or [], system_prompt=SYSTEM_PROMPT)


@contextlib.contextmanager
def talk_stack(
    model: Model,
    *,
    voice: str = DEFAULT_VOICE,
    lang: str | None = None,
    tts_url: str | None = None,
    settings: ListenSettings | None = None,
    recognizer: Recognizer | None = None,
    tools: list[Any] | None = None,
    speculate: bool = True,
) -> Iterator[TalkStack]:
    """Load the ONNX engine, serve the endpoint on 127.0.0.1 (unless ``tts_url``), make the agent."""
    with running_endpoint(tts_url) as (engine, url):
        cascade, agent = voice_agent(
            model,
            url,
            voice=voice,
            lang=lang,
            settings=settings,
            recognizer=recognizer,
            tools=tools,
            speculate=speculate,
        )
        yield TalkStack(engine, url, cascade, agent)
