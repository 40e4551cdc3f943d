"""The scripted model's Japanese answer, and the demo picking it for a Japanese voice."""

from __future__ import annotations

import pytest
from agentcore_app.models import ModelSpecError, create_model, parse_model_spec
from agentcore_app.scripted import SCRIPTED_ANSWER, SCRIPTED_ANSWERS, split_tokens
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.speech_text import clean_for_speech
from strands_voice_tools.demo.cli import answer_language


def test_scripted_model_answers_in_the_language_asked() -> None:
    assert create_model("scripted?lang=ja").get_config()["text"] == SCRIPTED_ANSWERS["ja"]
    assert create_model("scripted?lang=en").get_config()["text"] == SCRIPTED_ANSWER
    with pytest.raises(ModelSpecError, match="lang"):
        create_model("scripted?lang=xx")


def test_japanese_answer_streams_in_small_tokens_and_splits_into_sentences() -> None:
    answer = SCRIPTED_ANSWERS["ja"]
    tokens = split_tokens(answer)
    assert "".join(tokens) == answer and max(len(token.strip()) for token in tokens) <= 2
    assert split_tokens("Hello there, world.") == ["Hello ", "there, ", "world."]
    # The library's chunker, fed token by token: whole Japanese sentences (list markers cleaned away).
    chunker = IncrementalSentenceChunker()
    chunks = [chunk for token in tokens for chunk in chunker.feed(token)] + [chunker.flush()]
    spoken = [clean_for_speech(chunk) for chunk in chunks if clean_for_speech(chunk)]
    assert len(spoken) >= 8 and all(sentence.endswith("。") for sentence in spoken), spoken


@pytest.mark.parametrize(
    ("spec", "voice", "expected"),
    [
        ("scripted", "jf_alpha", "scripted?lang=ja"),
        ("scripted?total_s=1", "jf_alpha(2)+jm_kumo(1)", "scripted?total_s=1&lang=ja"),
        ("scripted?text=Hi", "jf_alpha", "scripted?text=Hi"),  # a chosen text stays
        ("scripted?lang=en", "jf_alpha", "scripted?lang=en"),
        ("scripted", "af_heart", "scripted"),
        ("scripted", None, "scripted"),
        ("ollama:llama3", "jf_alpha", "ollama:llama3"),  # a real model answers as it will
    ],
)
def test_demo_gives_a_japanese_voice_the_japanese_answer(spec: str, voice: str | None, expected: str) -> None:
    assert answer_language(spec, parse_model_spec(spec), voice) == expected


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("プレミアムプランには何が含まれていますか？", "ja"),
        ("高级套餐包括什么？", "zh"),
        ("¿Qué incluye el plan premium?", "es"),
        ("What does the premium plan include?", "en"),
    ],
)
def test_scripted_model_answers_in_the_callers_language(question: str, language: str) -> None:
    import asyncio

    from agentcore_app.scripted import ScriptedModel
    from strands import Agent

    async def answer(model: ScriptedModel) -> str:
        agent = Agent(model=model, callback_handler=None)
        return str(await agent.invoke_async(question)).strip()

    follows = ScriptedModel(first_sentence_s=0.01, total_s=0.02)
    assert asyncio.run(answer(follows)) == SCRIPTED_ANSWERS[language].strip()
    chosen = ScriptedModel("Fixed.", first_sentence_s=0.01, total_s=0.02)
    assert asyncio.run(answer(chosen)) == "Fixed."  # a chosen text stays whatever the question
