"""Dashboards, alarms and the conversation store in the synthesized templates (cdk-nag clean)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from strands_voice_infra.config import ConfigError, InfraConfig
from strands_voice_infra.models import get_model
from strands_voice_protocol.emf import AGENT_NAMESPACE, ENDPOINT_NAMESPACE, EmfWriter

KOKORO = get_model("kokoro-82m")
ENDPOINT = "strands-voice-kokoro-82m"


def _template(synth: Any, name: str) -> Template:
    return Template.from_json(synth.templates[name])


def _synth(config: InfraConfig, out: Path, *, speech: bool, agent: bool) -> dict[str, dict[str, Any]]:
    """Synthesize in process WITH cdk-nag (an unacknowledged finding raises SynthError)."""
    from strands_voice_infra import toolkit

    result = toolkit.synth(config, out, speech=speech, agent=agent)
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in result.templates.items()}


def _dashboard_metrics(template: dict[str, Any]) -> list[list[Any]]:
    """Every metric array of every dashboard body of a template (the body is a Fn::Join of strings)."""
    found: list[list[Any]] = []
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::CloudWatch::Dashboard":
            continue
        body = resource["Properties"]["DashboardBody"]
        text = (
            "".join(p if isinstance(p, str) else "TOKEN" for p in body["Fn::Join"][1])
            if isinstance(body, dict)
            else body
        )
        for widget in json.loads(text)["widgets"]:
            found += widget.get("properties", {}).get("metrics", [])
    return found


def _names_written(namespace: str) -> set[str]:
    """The metric names the endpoint or the app really writes (their own code, run here)."""
    lines: list[str] = []
    if namespace == ENDPOINT_NAMESPACE:
        from kokoro_endpoint.serving.metrics import EndpointMetrics

        endpoint = EndpointMetrics(EmfWriter(namespace, {"Endpoint": ENDPOINT}, lines.append))
        endpoint.request_done("bidi", 0.2, 2.0, 0.5)
        endpoint.error("busy")
        endpoint.report(1, 16, 0)
    else:
        from agentcore_app.metrics import AnswerMetrics

        app = AnswerMetrics(EmfWriter(namespace, {"Service": "s"}, lines.append))
        app.answer(
            mode="bidi",
            first_audio_s=0.5,
            audio_s=2.0,
            interrupted=False,
            error_codes=Counter(),
            trace_id=None,
        )
    return {
        m["Name"]
        for line in lines
        for d in json.loads(line)["_aws"]["CloudWatchMetrics"]
        for m in d["Metrics"]
    }


# -- the speech endpoint ---------------------------------------------------------------------------------


def test_endpoint_container_writes_emf_named_after_the_endpoint(speech_synth: Any) -> None:
    _template(speech_synth, f"Speech-{KOKORO.name}").has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "PrimaryContainer": Match.object_like(
                {"Environment": {"KOKORO_METRICS": "emf", "KOKORO_METRICS_ENDPOINT": ENDPOINT}}
            )
        },
    )


def test_speech_dashboard_shows_what_the_endpoint_writes(speech_synth: Any) -> None:
    template = speech_synth.templates[f"Speech-{KOKORO.name}"]
    Template.from_json(template).has_resource_properties(
        "AWS::CloudWatch::Dashboard", {"DashboardName": f"{ENDPOINT}-speech"}
    )
    metrics = _dashboard_metrics(template)
    own = [m for m in metrics if m[0] == ENDPOINT_NAMESPACE]
    shown = {(m[1], m[-1].get("stat")) for m in own if isinstance(m[-1], dict)}
    for wanted in [
        ("FirstChunkLatency", "p50"),
        ("FirstChunkLatency", "p95"),
        ("RealTimeFactor", "p50"),
        ("RealTimeFactor", "p95"),
        ("ActiveSessions", "Sum"),
        ("ActiveSessions", "SampleCount"),  # instances reporting
        ("Errors", "Sum"),
        ("QueuedSteps", "Maximum"),
    ]:
        assert wanted in shown, wanted
    assert {m[1] for m in own} <= _names_written(ENDPOINT_NAMESPACE)
    assert all(m[2:4] == ["Endpoint", ENDPOINT] for m in own)
    sagemaker = {m[1] for m in metrics if m[0] == "AWS/SageMaker"}
    assert {"Invocations", "Invocation5XXErrors"} <= sagemaker


def test_speech_alarms(speech_synth: Any) -> None:
    template = _template(speech_synth, f"Speech-{KOKORO.name}")
    template.resource_count_is("AWS::CloudWatch::Alarm", 3)
    p95 = {
        "MetricStat": {
            "Metric": {
                "Namespace": ENDPOINT_NAMESPACE,
                "MetricName": "FirstChunkLatency",
                "Dimensions": [{"Name": "Endpoint", "Value": ENDPOINT}],
            },
            "Period": 60,
            "Stat": "p95",
        }
    }
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Metrics": [Match.object_like(p95)],
            "Threshold": 1500,
            "ComparisonOperator": "GreaterThanThreshold",
            "TreatMissingData": "notBreaching",
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Threshold": 5,
            "Metrics": Match.array_with(
                [Match.object_like({"Expression": "IF(requests > 0, 100 * errors / requests, 0)"})]
            ),
        },
    )
    template.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "Threshold": 80,
            "ComparisonOperator": "GreaterThanOrEqualToThreshold",
            "Metrics": Match.array_with(
                [Match.object_like({"Expression": "IF(limit > 0, 100 * sessions / limit, 0)"})]
            ),
        },
    )
    alarms = speech_synth.templates[f"Speech-{KOKORO.name}"]["Resources"].values()
    used = {
        m["MetricStat"]["Metric"]["MetricName"]
        for a in alarms
        if a["Type"] == "AWS::CloudWatch::Alarm"
        for m in a["Properties"].get("Metrics", [])
        if "MetricStat" in m
    }
    assert used == {"FirstChunkLatency", "Errors", "Requests", "ActiveSessions", "SessionLimit"}
    assert used <= _names_written(ENDPOINT_NAMESPACE)
    template.resource_count_is("AWS::SNS::Topic", 0)  # no recipient configured: no topic


def test_alarm_email_gets_an_encrypted_topic_cdk_nag_clean(build_context: Path, tmp_path: Path) -> None:
    config = InfraConfig(
        speech_model=KOKORO,
        repo_root=build_context,
        alarm_email="ops@example.com",
        first_chunk_p95_alarm_ms=800,
    )
    templates = _synth(config, tmp_path, speech=True, agent=False)
    template = Template.from_json(templates[f"Speech-{KOKORO.name}"])
    template.has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})
    template.has_resource_properties("AWS::SNS::Topic", {"KmsMasterKeyId": Match.any_value()})
    template.has_resource_properties(
        "AWS::SNS::Subscription", {"Protocol": "email", "Endpoint": "ops@example.com"}
    )
    template.has_resource_properties(
        "AWS::SNS::TopicPolicy",
        {"PolicyDocument": {"Statement": Match.array_with([Match.object_like({"Effect": "Deny"})])}},
    )
    topic = template.find_resources("AWS::SNS::Topic")
    (topic_id,) = topic
    for alarm in template.find_resources("AWS::CloudWatch::Alarm").values():
        assert alarm["Properties"]["AlarmActions"] == [{"Ref": topic_id}]
        assert alarm["Properties"]["OKActions"] == [{"Ref": topic_id}]
    assert 800 in {
        a["Properties"]["Threshold"] for a in template.find_resources("AWS::CloudWatch::Alarm").values()
    }


def test_existing_topic_is_notified(build_context: Path) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_iam as iam
    from strands_voice_infra.speech_endpoint import SpeechEndpointStack

    arn = "arn:aws:sns:us-east-1:123456789012:oncall"
    config = InfraConfig(speech_model=KOKORO, repo_root=build_context, alarm_topic_arn=arn)
    app = App()
    role = iam.Role.from_role_arn(Stack(app, "Roles"), "Role", "arn:aws:iam::123456789012:role/x")
    stack = SpeechEndpointStack(app, "Custom", config=config, execution_role=role, model_data_uri="s3://b/p/")
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::SNS::Topic", 0)
    template.all_resources_properties("AWS::CloudWatch::Alarm", {"AlarmActions": [arn]})


# -- the agent runtime and its conversations --------------------------------------------------------------


def test_agent_dashboard_shows_what_the_app_writes(agent_synth: Any) -> None:
    template = agent_synth.templates["AgentRuntime"]
    Template.from_json(template).has_resource_properties(
        "AWS::CloudWatch::Dashboard", {"DashboardName": "strands_voice_agent-agent"}
    )
    own = [m for m in _dashboard_metrics(template) if m[0] == AGENT_NAMESPACE]
    names = {m[1] for m in own}
    assert {"TimeToFirstAudio", "Answers", "Interrupted", "SpeechErrors"} <= names
    assert names <= _names_written(AGENT_NAMESPACE)
    assert all(m[2:4] == ["Service", "strands_voice_agent"] for m in own)


def test_s3_conversation_store_is_private_encrypted_and_least_privilege(agent_synth: Any) -> None:
    foundation = _template(agent_synth, "AgentFoundation")
    foundation.has_resource_properties(
        "AWS::S3::Bucket",
        {
            "BucketEncryption": {
                "ServerSideEncryptionConfiguration": [
                    {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
                ]
            },
            "PublicAccessBlockConfiguration": {
                "BlockPublicAcls": True,
                "BlockPublicPolicy": True,
                "IgnorePublicAcls": True,
                "RestrictPublicBuckets": True,
            },
            "LifecycleConfiguration": {
                "Rules": [
                    Match.object_like(
                        {"Prefix": "conversations/", "ExpirationInDays": 30, "Status": "Enabled"}
                    )
                ]
            },
        },
    )
    foundation.has_resource("AWS::S3::Bucket", {"DeletionPolicy": "Retain"})
    foundation.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {"Effect": "Deny", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
                        )
                    ]
                )
            }
        },
    )
    statements = {
        s["Sid"]: s
        for r in agent_synth.templates["AgentFoundation"]["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    }
    rw = statements["ReadWriteConversations"]
    assert sorted(rw["Action"]) == ["s3:DeleteObject", "s3:GetObject", "s3:PutObject"]
    assert json.dumps(rw["Resource"]).endswith('"/conversations/*"]]}')
    listing = statements["ListConversations"]
    assert listing["Action"] == "s3:ListBucket"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["conversations/*"]}}
    env = _runtime_environment(agent_synth.templates["AgentRuntime"])
    assert env["CONVERSATION_STORE"] == "s3" and env["CONVERSATION_PREFIX"] == "conversations/"
    assert "AgentFoundation" in json.dumps(env["CONVERSATION_BUCKET"])  # that stack's bucket
    assert "AGENTCORE_MEMORY_ID" not in env
    assert (env["AGENT_METRICS"], env["AGENT_METRICS_SERVICE"]) == ("emf", "strands_voice_agent")


def _runtime_environment(template: dict[str, Any]) -> dict[str, Any]:
    (runtime,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::BedrockAgentCore::Runtime"]
    return dict(runtime["Properties"]["EnvironmentVariables"])


def test_agentcore_memory_store_cdk_nag_clean(build_context: Path, tmp_path: Path) -> None:
    config = InfraConfig(
        speech_model=KOKORO,
        repo_root=build_context,
        conversation_store="agentcore-memory",
        conversation_retention_days=7,
    )
    templates = _synth(config, tmp_path, speech=False, agent=True)
    foundation = Template.from_json(templates["AgentFoundation"])
    foundation.has_resource_properties("AWS::BedrockAgentCore::Memory", {"EventExpiryDuration": 7})
    foundation.resource_count_is("AWS::S3::Bucket", 0)
    (memory_id,) = foundation.find_resources("AWS::BedrockAgentCore::Memory")
    statements = [
        s
        for r in templates["AgentFoundation"]["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
        for s in r["Properties"]["PolicyDocument"]["Statement"]
    ]
    (memory,) = [s for s in statements if s["Sid"] == "UseConversationMemory"]
    assert memory["Resource"] == {"Fn::GetAtt": [memory_id, "MemoryArn"]}
    assert all(action.startswith("bedrock-agentcore:") and "*" not in action for action in memory["Action"])
    env = _runtime_environment(templates["AgentRuntime"])
    assert env["CONVERSATION_STORE"] == "agentcore-memory" and "AgentFoundation" in json.dumps(
        env["AGENTCORE_MEMORY_ID"]
    )
    assert "CONVERSATION_BUCKET" not in env


@pytest.mark.parametrize("store", ["file", "none"])
def test_stores_without_aws_resources(build_context: Path, store: str) -> None:
    from aws_cdk import App
    from strands_voice_infra.app_builder import build_app

    config = InfraConfig(speech_model=KOKORO, repo_root=build_context, conversation_store=store)
    built = build_app(config, speech=False, agent=True, nag=False, app=App())
    foundation = Template.from_stack(built.stacks["AgentFoundation"])
    foundation.resource_count_is("AWS::S3::Bucket", 0)
    foundation.resource_count_is("AWS::BedrockAgentCore::Memory", 0)
    env = Template.from_stack(built.stacks["AgentRuntime"]).find_resources("AWS::BedrockAgentCore::Runtime")
    (runtime,) = env.values()
    assert runtime["Properties"]["EnvironmentVariables"]["CONVERSATION_STORE"] == store


@pytest.mark.parametrize(
    "changes",
    [
        {"conversation_store": "dynamodb"},
        {"conversation_prefix": "no-slash"},
        {"conversation_prefix": "../x/"},
        {"conversation_retention_days": 0},
        {"alarm_email": "not-an-address"},
        {"alarm_topic_arn": "arn:aws:s3:::bucket"},
        {"sessions_alarm_percent": 120},
    ],
)
def test_invalid_monitoring_and_store_settings(changes: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        InfraConfig(speech_model=KOKORO, **changes)


def test_settings_from_context() -> None:
    config = InfraConfig.from_context(
        {
            "conversation_store": "agentcore-memory",
            "conversation_retention_days": "14",
            "alarm_email": "ops@example.com",
            "first_chunk_p95_alarm_ms": "900",
        }
    )
    assert config.conversation_store == "agentcore-memory" and config.conversation_retention_days == 14
    assert config.alarm_email == "ops@example.com" and config.first_chunk_p95_alarm_ms == 900.0
