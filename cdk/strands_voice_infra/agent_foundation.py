"""AgentFoundation: the AgentCore runtime's execution role, limited to one Bedrock model and one endpoint."""

from __future__ import annotations

import logging
from typing import Any

from aws_cdk import ArnFormat, CfnOutput, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from .config import InfraConfig
from .conversations import ConversationStoreResources
from .nag import suppress

__all__ = ["INFERENCE_PROFILE_GEOS", "AgentFoundationStack", "bedrock_model_statements"]

logger = logging.getLogger(__name__)

#: First segment of a cross-region inference profile id (``us.anthropic...``), as Bedrock names them.
INFERENCE_PROFILE_GEOS = frozenset({"us", "us-gov", "eu", "apac", "global", "jp", "au", "ca"})

_INVOKE = ["bedrock:InvokeModelWithResponseStream"]


def bedrock_model_statements(stack: Stack, model_id: str) -> list[iam.PolicyStatement]:
    """Statements allowing streamed invocation of exactly one model.

    - A foundation model id (``anthropic.claude-...``): that model in this region.
    - A cross-region inference profile (``us.anthropic.claude-...``): the profile in this account and
      region, plus the underlying foundation model in whichever region the profile routes to, but only
      when reached through that profile (``bedrock:InferenceProfileArn``).
    - A full ARN: exactly that ARN.

    Args:
        stack: The stack (for partition, region and account).
        model_id: The model id, profile id or ARN.

    Returns:
        One or two statements.
    """
    if model_id.startswith("arn:"):
        return [iam.PolicyStatement(sid="InvokeChosenModel", actions=_INVOKE, resources=[model_id])]
    geo, _, base = model_id.partition(".")
    if geo in INFERENCE_PROFILE_GEOS and base:
        profile_arn = stack.format_arn(
            service="bedrock",
            resource="inference-profile",
            resource_name=model_id,
            arn_format=ArnFormat.SLASH_RESOURCE_NAME,
        )
        return [
            iam.PolicyStatement(sid="InvokeChosenProfile", actions=_INVOKE, resources=[profile_arn]),
            iam.PolicyStatement(
                sid="InvokeChosenModelViaProfile",
                actions=_INVOKE,
                resources=[f"arn:{stack.partition}:bedrock:*::foundation-model/{base}"],
                conditions={"StringEquals": {"bedrock:InferenceProfileArn": profile_arn}},
            ),
        ]
    model_arn = f"arn:{stack.partition}:bedrock:{stack.region}::foundation-model/{model_id}"
    return [iam.PolicyStatement(sid="InvokeChosenModel", actions=_INVOKE, resources=[model_arn])]


class AgentFoundationStack(Stack):
    """The voice agent's execution role.

    Attributes:
        role: Assumed by AgentCore (this account only) to run the agent's container.
        endpoint_arn: ARN of the TTS endpoint the agent may stream to.
        conversations: Where the agent keeps its conversations (the role may use it; the runtime gets
            its ``environment``).
    """

    def __init__(self, scope: Construct, construct_id: str, *, config: InfraConfig, **kwargs: Any) -> None:
        """Define the role.

        Args:
            scope: The app.
            construct_id: The stack name.
            config: Deployment settings (Bedrock model, endpoint name, runtime name).
            **kwargs: Passed to ``Stack``.
        """
        super().__init__(scope, construct_id, **kwargs)

        agentcore_arns = f"arn:{self.partition}:bedrock-agentcore:{self.region}:{self.account}:*"
        self.role = iam.Role(
            self,
            "RuntimeRole",
            assumed_by=iam.ServicePrincipal(
                "bedrock-agentcore.amazonaws.com",
                conditions={
                    "StringEquals": {"aws:SourceAccount": self.account},
                    "ArnLike": {"aws:SourceArn": agentcore_arns},
                },
            ),
            description=f"AgentCore runtime role of {config.agent_runtime_name} (strands-voice)",
        )
        for statement in bedrock_model_statements(self, config.bedrock_model_id):
            self.role.add_to_policy(statement)

        # SageMaker endpoint ARNs carry the endpoint name in lower case.
        self.endpoint_arn = self.format_arn(
            service="sagemaker", resource="endpoint", resource_name=config.endpoint_name.lower()
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="StreamToTtsEndpoint",
                actions=["sagemaker:InvokeEndpointWithBidirectionalStream"],
                resources=[self.endpoint_arn],
            )
        )

        self._grant_runtime_logs(config)
        if config.uses_transcribe:
            self._grant_transcribe()

        self.conversations = ConversationStoreResources(self, "Conversations", config=config, role=self.role)

        CfnOutput(self, "RuntimeRoleArn", value=self.role.role_arn, description="AgentCore runtime role")
        logger.debug(
            "stack=<%s>, model=<%s> | agent foundation defined", construct_id, config.bedrock_model_id
        )

    def _grant_transcribe(self) -> None:
        """Let the role stream the calls' audio to Amazon Transcribe (``CALL_RECOGNIZER=transcribe``)."""
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="StreamToTranscribe", actions=["transcribe:StartStreamTranscription"], resources=["*"]
            )
        )
        reason = (
            "Amazon Transcribe's StartStreamTranscription has no resource type to name (the service "
            "authorization reference lists none), so the statement is the one action on '*'."
        )
        suppress(self.role, "AwsSolutions-IAM5", reason, applies_to=["Resource::*"])

    def _grant_runtime_logs(self, config: InfraConfig) -> None:
        """Let the role write the runtime's own log groups, and give cdk-nag the reason for its wildcards.

        The wildcards: the log names AgentCore picks at run time, and an inference profile's model ARN in
        any region.
        """
        runtime_logs = self.format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"/aws/bedrock-agentcore/runtimes/{config.agent_runtime_name}-*",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteRuntimeLogs",
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:DescribeLogStreams",
                ],
                resources=[runtime_logs, f"{runtime_logs}:log-stream:*"],
            )
        )

        findings = [
            f"Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:"
            f"/aws/bedrock-agentcore/runtimes/{config.agent_runtime_name}-*",
            f"Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:"
            f"/aws/bedrock-agentcore/runtimes/{config.agent_runtime_name}-*:log-stream:*",
        ]
        reason = (
            "AgentCore names the runtime's log group <runtime name>-<generated id> and its streams at run "
            "time; the wildcards stay inside this runtime's own log groups."
        )
        geo, _, base = config.bedrock_model_id.partition(".")
        if not config.bedrock_model_id.startswith("arn:") and geo in INFERENCE_PROFILE_GEOS and base:
            findings.append(f"Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/{base}")
            reason += (
                " A cross-region inference profile routes to the model in any of its regions, so the "
                "foundation model ARN has a region wildcard, and the statement only applies through the "
                "chosen profile (bedrock:InferenceProfileArn condition)."
            )
        suppress(self.role, "AwsSolutions-IAM5", reason, applies_to=findings)
