"""The spoken calls' recognizer in the deployment: the runtime gets ``CALL_RECOGNIZER``, and its role may
call Amazon Transcribe exactly when the app is configured for it (cdk-nag clean, with the reason)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from strands_voice_infra.config import ConfigError, InfraConfig
from strands_voice_infra.models import get_model

KOKORO = get_model("kokoro-82m")
TRANSCRIBE = "transcribe:StartStreamTranscription"


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        statement
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::IAM::Policy"
        for statement in resource["Properties"]["PolicyDocument"]["Statement"]
    ]


def _environment(template: dict[str, Any]) -> dict[str, Any]:
    (runtime,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::BedrockAgentCore::Runtime"]
    return dict(runtime["Properties"]["EnvironmentVariables"])


def test_a_transcribe_app_gets_the_permission_and_cdk_nag_passes(build_context: Path, tmp_path: Path) -> None:
    from aws_cdk.assertions import Match, Template
    from strands_voice_infra import toolkit

    config = InfraConfig(speech_model=KOKORO, repo_root=build_context, call_recognizer="transcribe:ja-JP")
    # With cdk-nag: an unacknowledged finding (the '*' resource) would fail the synth.
    result = toolkit.synth(config, tmp_path, speech=False, agent=True)
    templates = {
        name: json.loads(path.read_text(encoding="utf-8")) for name, path in result.templates.items()
    }
    Template.from_json(templates["AgentFoundation"]).has_resource_properties(
        "AWS::IAM::Policy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [Match.object_like({"Sid": "StreamToTranscribe", "Action": TRANSCRIBE, "Resource": "*"})]
                )
            }
        },
    )
    (transcribe,) = [s for s in _statements(templates["AgentFoundation"]) if s["Sid"] == "StreamToTranscribe"]
    assert transcribe["Effect"] == "Allow" and transcribe["Action"] == TRANSCRIBE  # that one action only
    assert _environment(templates["AgentRuntime"])["CALL_RECOGNIZER"] == "transcribe:ja-JP"


def test_a_whisper_app_gets_no_transcribe_permission(agent_synth: Any) -> None:
    statements = _statements(agent_synth.templates["AgentFoundation"])
    assert statements and not [s for s in statements if "transcribe" in json.dumps(s["Action"])]
    assert _environment(agent_synth.templates["AgentRuntime"])["CALL_RECOGNIZER"] == "whisper"


def test_the_recognizer_setting_is_checked_and_read_from_context_and_the_cli() -> None:
    from strands_voice_infra import agent_cli

    for bad in ("Transcribe", "transcribe:", "transcribe:japanese", "vosk"):
        with pytest.raises(ConfigError, match="call recognizer"):
            InfraConfig(speech_model=KOKORO, call_recognizer=bad)
    assert InfraConfig.from_context({"call_recognizer": "transcribe"}).uses_transcribe
    assert not InfraConfig.from_context({}).uses_transcribe
    args = agent_cli.build_parser().parse_args(["synth", "--call-recognizer", "transcribe:en-GB"])
    assert agent_cli._config(args).call_recognizer == "transcribe:en-GB"
