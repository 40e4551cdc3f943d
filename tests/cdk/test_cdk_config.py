"""Settings, the model registry and build-context rules: validated before any synthesis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from strands_voice_infra.config import (
    CDK_JSON,
    DEFAULT_BEDROCK_MODEL_ID,
    DOCKER_EXCLUDES,
    ConfigError,
    InfraConfig,
    feature_flags,
    image_excludes,
)
from strands_voice_infra.models import MODELS, UnknownModelError, get_model
from strands_voice_infra.stack_names import speech_stack_names

KOKORO = get_model("kokoro-82m")


def test_registry_names_stacks_endpoint_and_prefix() -> None:
    assert list(MODELS) == ["kokoro-82m"]
    assert get_model(" Kokoro-82M ") is KOKORO
    assert KOKORO.stack_name == "Speech-kokoro-82m"
    assert KOKORO.endpoint_name == "strands-voice-kokoro-82m"
    assert KOKORO.s3_prefix == f"models/kokoro-82m/{KOKORO.revision}/"
    assert KOKORO.construct_suffix == "Kokoro82m"
    assert speech_stack_names(KOKORO) == ("SpeechFoundation", "SpeechModelCache", "Speech-kokoro-82m")


def test_unknown_model_message_lists_the_known_ones() -> None:
    with pytest.raises(UnknownModelError) as caught:
        get_model("whisper")
    assert str(caught.value) == "unknown model 'whisper'; available: kokoro-82m"


def test_defaults() -> None:
    config = InfraConfig(speech_model=KOKORO)
    assert (config.instance_type, config.min_instances, config.max_instances) == ("ml.g5.xlarge", 1, 2)
    assert config.bedrock_model_id == DEFAULT_BEDROCK_MODEL_ID
    assert config.network_isolation is True


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"instance_type": "g5.xlarge"}, "instance type"),
        ({"min_instances": 0}, "at least 1"),
        ({"min_instances": 3, "max_instances": 2}, "max instances"),
        ({"target_concurrency": 0}, "target concurrency"),
        ({"bedrock_model_id": "anthropic claude"}, "Bedrock model id"),
        ({"agent_runtime_name": "strands-voice"}, "AgentCore runtime names"),
        ({"container_environment": {"BAD-NAME": "x"}}, "environment variable"),
    ],
)
def test_invalid_settings_are_refused(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        InfraConfig(speech_model=KOKORO).with_overrides(**changes)


def test_from_context_reads_cli_strings() -> None:
    config = InfraConfig.from_context(
        {
            "speech_model": "kokoro-82m",
            "instance_type": "ml.g5.2xlarge",
            "min_instances": "2",
            "max_instances": "8",
            "target_concurrency": "6.5",
            "network_isolation": "false",
            "bedrock_model_id": "anthropic.claude-3-5-haiku-20241022-v1:0",
        }
    )
    assert (config.instance_type, config.min_instances, config.max_instances) == ("ml.g5.2xlarge", 2, 8)
    assert (config.target_concurrency, config.network_isolation) == (6.5, False)


@pytest.mark.parametrize(
    ("context", "error"),
    [
        ({"min_instances": "two"}, ConfigError),
        ({"network_isolation": "maybe"}, ConfigError),
        ({"speech_model": "nope"}, UnknownModelError),
    ],
)
def test_from_context_refuses_bad_values(context: dict[str, str], error: type[Exception]) -> None:
    with pytest.raises(error):
        InfraConfig.from_context(context)


def test_cdk_json_holds_the_app_command_and_feature_flags() -> None:
    data = json.loads(CDK_JSON.read_text(encoding="utf-8"))
    assert data["app"] == "uv run python app.py"
    assert (CDK_JSON.parent / "app.py").is_file()
    flags = feature_flags()
    assert flags == data["context"]
    assert flags["@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy"] is True


def test_image_excludes_append_the_dockerfiles_own_ignore_file(tmp_path: Path) -> None:
    assert image_excludes(tmp_path, "endpoint/Dockerfile") == [*DOCKER_EXCLUDES, "!endpoint/Dockerfile"]
    ignore = tmp_path / "app" / "Dockerfile.dockerignore"
    ignore.parent.mkdir()
    ignore.write_text("# comment\n*\n\n!src/\n", encoding="utf-8")
    assert image_excludes(tmp_path, "app/Dockerfile")[len(DOCKER_EXCLUDES) :] == [
        "*",
        "!src/",
        "!app/Dockerfile.dockerignore",
        "!app/Dockerfile",
    ]


def test_default_excludes_cover_environments_and_outputs() -> None:
    for needed in (".git", "**/.venv", "**/cdk.out", "**/__pycache__", "**/node_modules", "tests"):
        assert needed in DOCKER_EXCLUDES
