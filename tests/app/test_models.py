"""Model selection from a ``--model`` / ``VOICE_MODEL`` spec."""

from __future__ import annotations

import sys

import pytest
from agentcore_app.models import (
    ModelChoice,
    ModelSpecError,
    aws_credentials_available,
    create_model,
    default_model_spec,
    parse_model_spec,
)
from agentcore_app.scripted import SCRIPTED_ANSWER, ScriptedModel
from strands.models.bedrock import BedrockModel
from strands_voice_protocol.errors import MissingDependencyError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("scripted", ModelChoice("scripted")),
        (" Scripted ", ModelChoice("scripted")),
        ("bedrock:us.amazon.nova-lite-v1:0", ModelChoice("bedrock", "us.amazon.nova-lite-v1:0")),
        (
            "bedrock:amazon.nova-pro-v1:0?region=eu-west-1",
            ModelChoice("bedrock", "amazon.nova-pro-v1:0", {"region": "eu-west-1"}),
        ),
        ("ollama:llama3.2:3b", ModelChoice("ollama", "llama3.2:3b")),
        (
            "ollama:qwen3?host=http://gpu-box:11434",
            ModelChoice("ollama", "qwen3", {"host": "http://gpu-box:11434"}),
        ),
        ("openai:gpt-4o-mini", ModelChoice("openai", "gpt-4o-mini")),
        (
            "scripted?total_s=1&text=Hi%20there.",
            ModelChoice("scripted", "", {"total_s": "1", "text": "Hi there."}),
        ),
    ],
)
def test_app_models_parse(spec: str, expected: ModelChoice) -> None:
    assert parse_model_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("claude", "unknown model"),
        ("", "unknown model"),
        ("bedrock", "needs a model id"),
        ("bedrock:", "needs a model id"),
        ("ollama", "ollama:<name>"),
        ("scripted:gpt", "takes no model id"),
        ("scripted?pace=fast", "unknown option"),
        ("bedrock:x?host=y", "unknown option"),
        ("scripted?total_s", "cannot read the options"),
    ],
)
def test_app_models_parse_rejects(spec: str, message: str) -> None:
    with pytest.raises(ModelSpecError, match=message):
        parse_model_spec(spec)


def test_app_models_descriptions_say_scripted_is_a_stand_in() -> None:
    assert "not a real model" in parse_model_spec("scripted").description
    assert parse_model_spec("bedrock:m1?region=us-east-1").description == "bedrock:m1"
    assert parse_model_spec("scripted?total_s=1").spec == "scripted"


def test_app_models_scripted_default_and_options() -> None:
    model = create_model("scripted")
    assert isinstance(model, ScriptedModel)
    assert model.get_config()["text"] == SCRIPTED_ANSWER
    assert model.get_config()["first_sentence_s"] == 0.6
    tuned = create_model("scripted?text=One.%20Two.&first_sentence_s=0.1&total_s=0.3")
    assert isinstance(tuned, ScriptedModel)
    assert tuned.get_config() == {
        "text": "One. Two.",
        "first_sentence_s": 0.1,
        "total_s": 0.3,
        "model_id": "scripted",
        "remember": False,
    }
    remembering = create_model("scripted?remember=1")
    assert isinstance(remembering, ScriptedModel) and remembering.get_config()["remember"] is True


def test_app_models_scripted_remember_opens_with_the_previous_question() -> None:
    from strands import Agent

    agent = Agent(model=ScriptedModel("Fine.", 0.01, 0.02, remember=True), callback_handler=None)
    assert str(agent("Is it good?")).strip() == "Fine."
    assert str(agent("And the price?")).strip() == "Earlier you asked: Is it good. Fine."


@pytest.mark.parametrize(
    "spec",
    [
        "scripted?total_s=soon",
        "scripted?total_s=-1",
        "scripted?total_s=nan",
        "scripted?text=",
        "scripted?remember=yes",
    ],
)
def test_app_models_scripted_rejects_bad_options(spec: str) -> None:
    with pytest.raises(ModelSpecError):
        create_model(spec)


def test_app_models_bedrock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    model = create_model("bedrock:amazon.nova-lite-v1:0?region=eu-central-1")
    assert isinstance(model, BedrockModel)
    assert model.get_config()["model_id"] == "amazon.nova-lite-v1:0"
    assert model.client.meta.region_name == "eu-central-1"


@pytest.mark.parametrize(("provider", "module"), [("ollama", "ollama"), ("openai", "openai")])
def test_app_models_missing_extra_says_what_to_install(
    provider: str, module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client library is hidden (None in sys.modules makes its import fail), whether or not this
    # environment has it, so the test always runs.
    monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.delitem(sys.modules, f"strands.models.{provider}", raising=False)
    monkeypatch.delitem(sys.modules, "agentcore_app.kept_client", raising=False)  # it imports openai
    with pytest.raises(MissingDependencyError, match=rf"strands-agents\[{provider}\]"):
        create_model(f"{provider}:some-model")


def _no_aws_config(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "BEDROCK_MODEL_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/none-credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/none-config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_app_models_default_is_scripted_without_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    _no_aws_config(monkeypatch, tmp_path)
    assert aws_credentials_available() is False
    assert default_model_spec() == "scripted"


def test_app_models_default_is_bedrock_with_credentials(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    _no_aws_config(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    assert aws_credentials_available() is True
    assert default_model_spec().startswith("bedrock:")
    monkeypatch.setenv("BEDROCK_MODEL_ID", "amazon.nova-micro-v1:0")
    assert default_model_spec() == "bedrock:amazon.nova-micro-v1:0"
