"""The PhoneBridge stack: the bridge on ECS Fargate behind an ALB's TLS listener, allowed to invoke one
runtime and nothing else; cdk-nag finds nothing unacknowledged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Match, Template
from strands_voice_infra.nag import apply_nag
from strands_voice_infra.phone_bridge import BRIDGE_DOCKERFILE, BRIDGE_PORT, PhoneBridgeStack

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    root = tmp_path_factory.mktemp("repo")
    (root / BRIDGE_DOCKERFILE).parent.mkdir(parents=True)
    (root / BRIDGE_DOCKERFILE).write_text("FROM public.ecr.aws/docker/library/python:3.12-slim\n")
    app = App(outdir=str(tmp_path_factory.mktemp("out")))
    stack = PhoneBridgeStack(
        app, "PhoneBridge", repo_root=root, env={"account": "123456789012", "region": "us-east-1"}
    )
    apply_nag(app)
    app.synth()  # cdk-nag's findings, if any were not acknowledged, fail synthesis here
    return Template.from_stack(stack)


def test_the_runtime_and_the_certificate_are_parameters(template: Template) -> None:
    parameters = template.to_json()["Parameters"]
    assert {"RuntimeArn", "CertificateArn"} <= set(parameters)
    assert "bedrock-agentcore" in parameters["RuntimeArn"]["AllowedPattern"]


def test_the_tls_listener_forwards_to_the_bridge_with_its_health_check(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ElasticLoadBalancingV2::Listener",
        {"Port": 443, "Protocol": "HTTPS", "Certificates": [{"CertificateArn": {"Ref": "CertificateArn"}}]},
    )
    template.resource_count_is("AWS::ElasticLoadBalancingV2::Listener", 1)
    template.has_resource_properties(
        "AWS::ElasticLoadBalancingV2::TargetGroup",
        {
            "Port": BRIDGE_PORT,
            "Protocol": "HTTP",
            "TargetType": "ip",
            "HealthCheckPath": "/ping",
            "TargetGroupAttributes": Match.array_with(
                [{"Key": "deregistration_delay.timeout_seconds", "Value": "300"}]
            ),
        },
    )
    template.has_resource_properties(
        "AWS::ElasticLoadBalancingV2::LoadBalancer",
        {
            "Scheme": "internet-facing",
            "LoadBalancerAttributes": Match.array_with([{"Key": "access_logs.s3.enabled", "Value": "true"}]),
        },
    )


def test_the_task_runs_the_bridge_for_the_runtime_in_private_subnets(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ECS::TaskDefinition",
        {
            "RequiresCompatibilities": ["FARGATE"],
            "ContainerDefinitions": [
                Match.object_like(
                    {
                        "Command": ["--runtime-arn", {"Ref": "RuntimeArn"}],
                        "PortMappings": [Match.object_like({"ContainerPort": BRIDGE_PORT})],
                    }
                )
            ],
        },
    )
    service = next(iter(template.find_resources("AWS::ECS::Service").values()))["Properties"]
    assert service["LaunchType"] == "FARGATE"
    assert service["NetworkConfiguration"]["AwsvpcConfiguration"]["AssignPublicIp"] == "DISABLED"


def _task_role_statements(template: Template) -> list[dict[str, Any]]:
    roles = template.find_resources(
        "AWS::IAM::Role",
        {"Properties": {"AssumeRolePolicyDocument": Match.object_like({"Statement": Match.any_value()})}},
    )
    task_role = next(name for name in roles if name.startswith("TaskRole"))
    policies = template.find_resources("AWS::IAM::Policy")
    return [
        statement
        for policy in policies.values()
        if policy["Properties"]["Roles"] == [{"Ref": task_role}]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_the_task_may_invoke_that_runtime_and_nothing_else(template: Template) -> None:
    statements = _task_role_statements(template)
    assert statements == [
        {
            "Sid": "InvokeTheRuntime",
            "Action": "bedrock-agentcore:InvokeAgentRuntime*",
            "Effect": "Allow",
            "Resource": [
                {"Ref": "RuntimeArn"},
                {"Fn::Join": ["", [{"Ref": "RuntimeArn"}, "/runtime-endpoint/*"]]},
            ],
        }
    ]


def test_the_app_adds_the_bridge_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from strands_voice_infra.app_builder import PHONE_BRIDGE, build_app
    from strands_voice_infra.config import InfraConfig
    from strands_voice_infra.models import get_model

    monkeypatch.setenv("CDK_DEFAULT_REGION", "eu-west-1")  # what the CDK CLI sets from the profile
    config = InfraConfig(speech_model=get_model("kokoro-82m"))
    assert (config.repo_root / BRIDGE_DOCKERFILE).is_file()
    asked = build_app(config, speech=False, agent=False, nag=False, phone_bridge=True, outdir=str(tmp_path))
    unasked = build_app(config, speech=False, agent=False, nag=False, outdir=str(tmp_path / "none"))
    assert list(asked.stacks) == [PHONE_BRIDGE]
    assert asked.stacks[PHONE_BRIDGE].region == "eu-west-1"
    assert unasked.stacks == {}
