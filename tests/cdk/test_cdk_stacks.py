"""The synthesized stacks carry the resources and settings a security reviewer signs off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from strands_voice_infra.models import get_model

KOKORO = get_model("kokoro-82m")


def _template(synth: Any, name: str) -> Template:
    return Template.from_json(synth.templates[name])


def _statements(template: dict[str, Any]) -> list[dict[str, Any]]:
    """Every IAM statement of a template: policies, inline role policies, and trust policies excluded."""
    found = []
    for resource in template["Resources"].values():
        props = resource.get("Properties", {})
        if resource["Type"] in {"AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"}:
            found += props["PolicyDocument"]["Statement"]
        if resource["Type"] == "AWS::IAM::Role":
            for policy in props.get("Policies", []):
                found += policy["PolicyDocument"]["Statement"]
    return found


def _actions(statement: dict[str, Any]) -> list[str]:
    actions = statement.get("Action", [])
    return [actions] if isinstance(actions, str) else list(actions)


def _flatten(value: Any) -> str:
    """A CloudFormation value as one string, tokens included (for 'names this ARN' checks)."""
    return json.dumps(value, sort_keys=True)


# -- every stack -----------------------------------------------------------------------------------------


def test_synth_writes_every_stack(speech_synth: Any, agent_synth: Any) -> None:
    assert set(speech_synth.templates) == {"SpeechFoundation", "SpeechModelCache", "Speech-kokoro-82m"}
    assert set(agent_synth.templates) == {"AgentFoundation", "AgentRuntime"}
    assert "synthesized 3 stacks" in speech_synth.output
    assert "synthesized 2 stacks" in agent_synth.output


def test_no_iam_statement_grants_wildcard_actions(speech_synth: Any, agent_synth: Any) -> None:
    templates = {**speech_synth.templates, **agent_synth.templates}
    checked = 0
    for name, template in templates.items():
        for statement in _statements(template):
            assert statement["Effect"] == "Allow", (name, statement)
            for action in _actions(statement):
                assert "*" not in action, (name, action)
                checked += 1
    assert checked > 10


def test_no_managed_policies_anywhere(speech_synth: Any, agent_synth: Any) -> None:
    for template in {**speech_synth.templates, **agent_synth.templates}.values():
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::IAM::Role":
                assert "ManagedPolicyArns" not in resource["Properties"]
            assert resource["Type"] != "AWS::IAM::ManagedPolicy"


def test_only_wildcard_resource_is_the_ecr_login(speech_synth: Any, agent_synth: Any) -> None:
    for template in {**speech_synth.templates, **agent_synth.templates}.values():
        for statement in _statements(template):
            resources = (
                statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
            )
            if "*" in resources:
                assert _actions(statement) == ["ecr:GetAuthorizationToken"]


def test_resources_are_tagged(speech_synth: Any, agent_synth: Any) -> None:
    tag = {"Tags": Match.array_with([{"Key": "project", "Value": "strands-voice"}])}
    _template(speech_synth, "Speech-kokoro-82m").has_resource_properties("AWS::SageMaker::Endpoint", tag)
    _template(speech_synth, "SpeechFoundation").has_resource_properties("AWS::S3::Bucket", tag)
    _template(agent_synth, "AgentFoundation").has_resource_properties("AWS::IAM::Role", tag)


# -- SpeechFoundation ------------------------------------------------------------------------------------


def test_model_bucket_is_encrypted_private_versioned_logged_and_retained(speech_synth: Any) -> None:
    template = _template(speech_synth, "SpeechFoundation")
    template.resource_count_is("AWS::S3::Bucket", 2)  # weights + their access logs
    template.has_resource(
        "AWS::S3::Bucket",
        {
            "Properties": {
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
                "VersioningConfiguration": {"Status": "Enabled"},
                "LoggingConfiguration": Match.object_like({"LogFilePrefix": "model-bucket/"}),
            },
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
        },
    )
    # Both buckets are retained, encrypted and private.
    for bucket in template.find_resources("AWS::S3::Bucket").values():
        assert bucket["DeletionPolicy"] == "Retain"
        assert bucket["Properties"]["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] is True


def test_model_bucket_denies_plain_http(speech_synth: Any) -> None:
    template = _template(speech_synth, "SpeechFoundation")
    policies = template.find_resources("AWS::S3::BucketPolicy")
    assert len(policies) == 2
    for policy in policies.values():
        deny = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
        assert {"Bool": {"aws:SecureTransport": "false"}} in [s["Condition"] for s in deny]


def test_sagemaker_role_reads_only_its_prefix_and_writes_only_its_logs(speech_synth: Any) -> None:
    template = _template(speech_synth, "SpeechFoundation")
    roles = template.find_resources(
        "AWS::IAM::Role",
        {
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Statement": [Match.object_like({"Principal": {"Service": "sagemaker.amazonaws.com"}})]
                }
            }
        },
    )
    assert len(roles) == 1
    role_id = next(iter(roles))
    policies = [
        p
        for p in template.find_resources("AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": role_id}]
    ]
    assert len(policies) == 1
    statements = {s["Sid"]: s for s in policies[0]["Properties"]["PolicyDocument"]["Statement"]}
    assert set(statements) == {"ReadModelPrefix", "ListModelPrefix", "WriteEndpointLogs"}
    assert statements["ReadModelPrefix"]["Action"] == "s3:GetObject"
    assert _flatten(statements["ReadModelPrefix"]["Resource"]).endswith('"/models/kokoro-82m/*"]]}')
    assert statements["ListModelPrefix"]["Condition"] == {
        "StringLike": {"s3:prefix": ["models/kokoro-82m/*"]}
    }
    log_resources = _flatten(statements["WriteEndpointLogs"]["Resource"])
    assert "log-group:/aws/sagemaker/Endpoints/strands-voice-kokoro-82m" in log_resources
    assert "s3:PutObject" not in _flatten(policies[0])


def test_snapshot_copy_role_writes_only_model_prefixes(speech_synth: Any) -> None:
    template = _template(speech_synth, "SpeechFoundation")
    roles = template.find_resources(
        "AWS::IAM::Role",
        {
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Statement": [Match.object_like({"Principal": {"Service": "lambda.amazonaws.com"}})]
                }
            }
        },
    )
    assert len(roles) == 1
    policy = next(
        p
        for p in template.find_resources("AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": next(iter(roles))}]
    )
    write = next(
        s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Sid"] == "WriteModelPrefixes"
    )
    assert _flatten(write["Resource"]).endswith('"/models/kokoro-82m/*"]]}')


# -- SpeechModelCache ------------------------------------------------------------------------------------


def test_model_cache_copies_the_pinned_snapshot(speech_synth: Any) -> None:
    template = _template(speech_synth, "SpeechModelCache")
    template.has_resource_properties(
        "Custom::HuggingFaceSnapshot",
        {
            "RepoId": "hexgrad/Kokoro-82M",
            "Revision": KOKORO.revision,
            "Prefix": f"models/kokoro-82m/{KOKORO.revision}/",
            "Include": ["config.json", "kokoro-v1_0.pth", "voices/*.pt"],
            "ExpectedSha256": {"kokoro-v1_0.pth": KOKORO.expected_sha256["kokoro-v1_0.pth"]},
        },
    )
    assert len(KOKORO.revision) == 40 and all(c in "0123456789abcdef" for c in KOKORO.revision)
    template.has_resource_properties(
        "AWS::Lambda::Function",
        {
            "Handler": "hf_snapshot_to_s3.handler",
            "Runtime": Match.string_like_regexp(r"^python3\.1[3-9]$"),
            "Timeout": 900,
        },
    )
    template.has_resource_properties(
        "AWS::Logs::LogGroup",
        {"LogGroupName": "/aws/lambda/strands-voice-model-cache", "RetentionInDays": 30},
    )
    assert speech_synth.templates["SpeechModelCache"]["Outputs"]


def test_model_cache_function_ships_only_the_handler(speech_synth: Any) -> None:
    assets = json.loads((speech_synth.assembly / "SpeechModelCache.assets.json").read_text())
    (file_asset,) = [a for a in assets["files"].values() if a["source"].get("packaging") == "zip"]
    staged = speech_synth.assembly / file_asset["source"]["path"]
    assert sorted(p.name for p in staged.iterdir()) == ["hf_snapshot_to_s3.py"]


# -- Speech-kokoro-82m -----------------------------------------------------------------------------------


def test_model_mounts_the_uncompressed_s3_prefix(speech_synth: Any) -> None:
    template = _template(speech_synth, "Speech-kokoro-82m")
    template.has_resource_properties(
        "AWS::SageMaker::Model",
        {
            "EnableNetworkIsolation": True,
            "PrimaryContainer": {
                "Image": Match.any_value(),
                "Mode": "SingleModel",
                "ModelDataSource": {
                    "S3DataSource": {
                        "S3DataType": "S3Prefix",
                        "CompressionType": "None",
                        "S3Uri": Match.any_value(),
                    }
                },
            },
        },
    )
    model = next(iter(template.find_resources("AWS::SageMaker::Model").values()))
    # The weights URI comes from the snapshot resource, so the endpoint waits for the copy.
    assert "SpeechModelCache" in _flatten(model["Properties"]["PrimaryContainer"]["ModelDataSource"])
    assert "ImagePullPolicy" in _flatten(model.get("DependsOn", []))


def test_endpoint_config_defaults_to_one_g5_xlarge(speech_synth: Any) -> None:
    template = _template(speech_synth, "Speech-kokoro-82m")
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                Match.object_like(
                    {
                        "VariantName": "AllTraffic",
                        "InstanceType": "ml.g5.xlarge",
                        "InitialInstanceCount": 1,
                        # NVIDIA driver 550 / CUDA 12.4: runs the torch cu126 build of endpoint/Dockerfile.
                        "InferenceAmiVersion": "al2-ami-sagemaker-inference-gpu-3-1",
                    }
                )
            ]
        },
    )
    template.has_resource_properties("AWS::SageMaker::Endpoint", {"EndpointName": "strands-voice-kokoro-82m"})


def test_endpoint_scales_on_concurrency(speech_synth: Any) -> None:
    template = _template(speech_synth, "Speech-kokoro-82m")
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget",
        {
            "ServiceNamespace": "sagemaker",
            "ScalableDimension": "sagemaker:variant:DesiredInstanceCount",
            "MinCapacity": 1,
            "MaxCapacity": 2,
        },
    )
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {
            "PolicyType": "TargetTrackingScaling",
            "TargetTrackingScalingPolicyConfiguration": Match.object_like(
                {
                    "TargetValue": 4,
                    "PredefinedMetricSpecification": {
                        "PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"
                    },
                }
            ),
        },
    )
    target = next(iter(template.find_resources("AWS::ApplicationAutoScaling::ScalableTarget").values()))
    assert "RoleARN" not in target["Properties"]  # the service-linked role, nothing hand-made


def test_endpoint_image_is_built_from_the_endpoint_dockerfile(speech_synth: Any) -> None:
    assets = json.loads((speech_synth.assembly / "Speech-kokoro-82m.assets.json").read_text())
    (image,) = assets["dockerImages"].values()
    assert image["source"]["dockerFile"] == "endpoint/Dockerfile"
    assert image["source"]["platform"] == "linux/amd64"
    staged = speech_synth.assembly / image["source"]["directory"]
    assert (staged / "endpoint" / "Dockerfile").is_file()


def _staged_files(synth: Any, stack: str) -> set[str]:
    assets = json.loads((synth.assembly / f"{stack}.assets.json").read_text())
    (image,) = assets["dockerImages"].values()
    staged = synth.assembly / image["source"]["directory"]
    return {str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file()}


def test_endpoint_build_context_leaves_out_environments_caches_and_tests(speech_synth: Any) -> None:
    assert _staged_files(speech_synth, "Speech-kokoro-82m") == {
        "endpoint/Dockerfile",
        "examples/agentcore_app/Dockerfile",
        "examples/agentcore_app/Dockerfile.dockerignore",
        "pyproject.toml",
        "strands_voice/__init__.py",
    }


def test_agent_build_context_follows_its_dockerignore(agent_synth: Any) -> None:
    assert _staged_files(agent_synth, "AgentRuntime") == {
        "examples/agentcore_app/Dockerfile",
        "examples/agentcore_app/Dockerfile.dockerignore",
        "pyproject.toml",
        "strands_voice/__init__.py",
    }


def test_endpoint_image_pull_is_scoped_to_its_repository(speech_synth: Any) -> None:
    template = _template(speech_synth, "Speech-kokoro-82m")
    (policy,) = template.find_resources("AWS::IAM::Policy").values()
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    assert "container-assets" in _flatten(statements["PullOwnImage"]["Resource"])
    assert statements["EcrLogin"]["Resource"] == "*"


def test_endpoint_settings_are_configurable(build_context: Path) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_iam as iam
    from strands_voice_infra.config import InfraConfig
    from strands_voice_infra.speech_endpoint import SpeechEndpointStack

    config = InfraConfig(
        speech_model=KOKORO,
        instance_type="ml.g6.2xlarge",
        min_instances=2,
        max_instances=6,
        target_concurrency=8,
        repo_root=build_context,
    )
    app = App()
    role = iam.Role.from_role_arn(Stack(app, "Roles"), "Role", "arn:aws:iam::123456789012:role/x")
    stack = SpeechEndpointStack(app, "Custom", config=config, execution_role=role, model_data_uri="s3://b/p/")
    template = Template.from_stack(stack)
    template.has_resource_properties(
        "AWS::SageMaker::EndpointConfig",
        {
            "ProductionVariants": [
                Match.object_like(
                    {
                        "InstanceType": "ml.g6.2xlarge",
                        "InitialInstanceCount": 2,
                        "InferenceAmiVersion": "al2-ami-sagemaker-inference-gpu-3-1",
                    }
                )
            ]
        },
    )
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalableTarget", {"MinCapacity": 2, "MaxCapacity": 6}
    )
    template.has_resource_properties(
        "AWS::ApplicationAutoScaling::ScalingPolicy",
        {"TargetTrackingScalingPolicyConfiguration": Match.object_like({"TargetValue": 8})},
    )


# -- AgentFoundation / AgentRuntime ----------------------------------------------------------------------


def _agent_statements(agent_synth: Any) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in _statements(agent_synth.templates["AgentFoundation"])}


def test_agent_role_streams_to_this_endpoint_only(agent_synth: Any) -> None:
    statement = _agent_statements(agent_synth)["StreamToTtsEndpoint"]
    assert statement["Action"] == "sagemaker:InvokeEndpointWithBidirectionalStream"
    resource = _flatten(statement["Resource"])
    assert resource.endswith(':endpoint/strands-voice-kokoro-82m"]]}')
    assert "*" not in resource


def test_agent_role_invokes_the_chosen_model_only(agent_synth: Any) -> None:
    statements = _agent_statements(agent_synth)
    profile = statements["InvokeChosenProfile"]
    assert profile["Action"] == "bedrock:InvokeModelWithResponseStream"
    assert _flatten(profile["Resource"]).endswith(
        ':inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0"]]}'
    )
    via = statements["InvokeChosenModelViaProfile"]
    assert via["Action"] == "bedrock:InvokeModelWithResponseStream"
    assert _flatten(via["Resource"]).endswith(
        ':bedrock:*::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0"]]}'
    )
    assert _flatten(via["Condition"]["StringEquals"]["bedrock:InferenceProfileArn"]) == _flatten(
        profile["Resource"]
    )
    bedrock_actions = {a for s in statements.values() for a in _actions(s) if a.startswith("bedrock:")}
    assert bedrock_actions == {"bedrock:InvokeModelWithResponseStream"}


def test_agent_role_trusts_agentcore_in_this_account_only(agent_synth: Any) -> None:
    template = _template(agent_synth, "AgentFoundation")
    template.has_resource_properties(
        "AWS::IAM::Role",
        {
            "AssumeRolePolicyDocument": {
                "Statement": [
                    Match.object_like(
                        {
                            "Principal": {"Service": "bedrock-agentcore.amazonaws.com"},
                            "Condition": {
                                "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                                "ArnLike": {"aws:SourceArn": Match.any_value()},
                            },
                        }
                    )
                ]
            }
        },
    )


@pytest.mark.parametrize(
    ("model_id", "expected_suffix"),
    [
        (
            "anthropic.claude-3-5-haiku-20241022-v1:0",
            "::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        (
            "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123",
            "arn:aws:bedrock:us-west-2:123456789012:application-inference-profile/abc123",
        ),
    ],
)
def test_agent_role_for_other_model_kinds(model_id: str, expected_suffix: str) -> None:
    from aws_cdk import App
    from strands_voice_infra.agent_foundation import AgentFoundationStack
    from strands_voice_infra.config import InfraConfig

    stack = AgentFoundationStack(
        App(), "Agent", config=InfraConfig(speech_model=KOKORO, bedrock_model_id=model_id)
    )
    statements = _statements(Template.from_stack(stack).to_json())
    invoke = [s for s in statements if "bedrock:InvokeModelWithResponseStream" in _actions(s)]
    assert len(invoke) == 1
    assert _flatten(invoke[0]["Resource"]).rstrip('"]}').endswith(expected_suffix)
    assert "*" not in _flatten(invoke[0]["Resource"])


def test_runtime_points_at_the_endpoint_and_model(agent_synth: Any) -> None:
    template = _template(agent_synth, "AgentRuntime")
    template.has_resource_properties(
        "AWS::BedrockAgentCore::Runtime",
        {
            "AgentRuntimeName": "strands_voice_agent",
            "ProtocolConfiguration": "HTTP",
            "NetworkConfiguration": {"NetworkMode": "PUBLIC"},
            "AgentRuntimeArtifact": {"ContainerConfiguration": {"ContainerUri": Match.any_value()}},
            "EnvironmentVariables": {
                "TTS_ENDPOINT_URL": {
                    "Fn::Join": ["", ["sagemaker://strands-voice-kokoro-82m?region=", {"Ref": "AWS::Region"}]]
                },
                "BEDROCK_MODEL_ID": "us.anthropic.claude-haiku-4-5-20251001-v1:0",
                "AWS_REGION": {"Ref": "AWS::Region"},
                "AGENT_METRICS": "emf",
                "AGENT_METRICS_SERVICE": "strands_voice_agent",
                "CONVERSATION_STORE": "s3",
                "CONVERSATION_BUCKET": Match.any_value(),
                "CONVERSATION_PREFIX": "conversations/",
            },
        },
    )
    outputs = agent_synth.templates["AgentRuntime"]["Outputs"]
    assert outputs["RuntimeArn"]["Value"] == {"Fn::GetAtt": ["Runtime", "AgentRuntimeArn"]}
    assert outputs["TtsEndpointName"]["Value"] == "strands-voice-kokoro-82m"


def test_runtime_image_is_arm64_from_the_app_dockerfile(agent_synth: Any) -> None:
    assets = json.loads((agent_synth.assembly / "AgentRuntime.assets.json").read_text())
    (image,) = assets["dockerImages"].values()
    assert image["source"]["dockerFile"] == "examples/agentcore_app/Dockerfile"
    assert image["source"]["platform"] == "linux/arm64"


def test_speech_outputs_name_the_endpoint(speech_synth: Any) -> None:
    outputs = speech_synth.templates["Speech-kokoro-82m"]["Outputs"]
    assert outputs["EndpointName"]["Value"] == {"Fn::GetAtt": ["Endpoint", "EndpointName"]}
    assert "endpoint/strands-voice-kokoro-82m" in _flatten(outputs["EndpointArn"]["Value"])


def test_cpu_instances_get_no_gpu_ami(build_context: Path) -> None:
    from aws_cdk import App, Stack
    from aws_cdk import aws_iam as iam
    from strands_voice_infra.config import InfraConfig, is_gpu_instance
    from strands_voice_infra.speech_endpoint import SpeechEndpointStack

    assert (
        is_gpu_instance("ml.g5.xlarge")
        and is_gpu_instance("ml.g6e.2xlarge")
        and is_gpu_instance("ml.p4d.24xlarge")
    )
    assert not is_gpu_instance("ml.c7i.xlarge") and not is_gpu_instance("ml.inf2.xlarge")
    config = InfraConfig(speech_model=KOKORO, instance_type="ml.c7i.xlarge", repo_root=build_context)
    app = App()
    role = iam.Role.from_role_arn(Stack(app, "Roles"), "Role", "arn:aws:iam::123456789012:role/x")
    stack = SpeechEndpointStack(app, "Cpu", config=config, execution_role=role, model_data_uri="s3://b/p/")
    (endpoint_config,) = Template.from_stack(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    (variant,) = endpoint_config["Properties"]["ProductionVariants"]
    assert variant["InstanceType"] == "ml.c7i.xlarge" and "InferenceAmiVersion" not in variant


def test_the_ami_and_the_image_torch_build_agree() -> None:
    """The AMI's driver (550, CUDA 12.4) runs CUDA 12.x builds only: the image must install one."""
    from strands_voice_infra.config import REPO_ROOT

    assert KOKORO.inference_ami_version == "al2-ami-sagemaker-inference-gpu-3-1"
    dockerfile = (REPO_ROOT / "endpoint" / "Dockerfile").read_text()
    assert "ARG TORCH_CUDA=cu126" in dockerfile
    assert "https://download.pytorch.org/whl/${TORCH_CUDA}" in dockerfile
    assert "al2-ami-sagemaker-inference-gpu-3-1" in dockerfile and "KOKORO_DEVICE=cuda" in dockerfile
