"""AgentRuntime: the voice agent's ARM64 image and its Bedrock AgentCore runtime."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_bedrockagentcore as agentcore
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from constructs import Construct

from .config import InfraConfig
from .images import service_image
from .monitoring import AgentMonitoring

__all__ = ["AGENT_DOCKERFILE", "AgentRuntimeStack", "tts_endpoint_url"]

logger = logging.getLogger(__name__)

#: The app's Dockerfile, relative to the repository root (the build context).
AGENT_DOCKERFILE = "examples/agentcore_app/Dockerfile"


def tts_endpoint_url(endpoint_name: str, region: str) -> str:
    """The app's ``TTS_ENDPOINT_URL`` for a SageMaker endpoint: ``sagemaker://<name>?region=<region>``."""
    return f"sagemaker://{endpoint_name}?region={region}"


class AgentRuntimeStack(Stack):
    """The AgentCore runtime serving ``examples/agentcore_app``.

    Attributes:
        image: The app's container image asset (linux/arm64, as AgentCore requires).
        runtime: The ``AWS::BedrockAgentCore::Runtime``.
        monitoring: The runtime's dashboard (:mod:`strands_voice_infra.monitoring`).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: InfraConfig,
        role: iam.IRole,
        conversation_environment: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Define the image and the runtime.

        Args:
            scope: The app.
            construct_id: The stack name.
            config: Deployment settings (Bedrock model, endpoint, runtime name).
            role: The runtime's execution role (from AgentFoundation).
            conversation_environment: The conversation store's variables (from AgentFoundation); None:
                no store (``CONVERSATION_STORE=none``).
            **kwargs: Passed to ``Stack``.
        """
        super().__init__(scope, construct_id, **kwargs)

        self.image, pull_policy = service_image(
            self,
            repo_root=config.repo_root,
            dockerfile=AGENT_DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_ARM64,
            display_name="voice agent image",
            role=role,
        )

        self.runtime = agentcore.CfnRuntime(
            self,
            "Runtime",
            agent_runtime_name=config.agent_runtime_name,
            description="Strands voice agent: streams text and speech over SSE",
            role_arn=role.role_arn,
            agent_runtime_artifact=agentcore.CfnRuntime.AgentRuntimeArtifactProperty(
                container_configuration=agentcore.CfnRuntime.ContainerConfigurationProperty(
                    container_uri=self.image.image_uri
                )
            ),
            network_configuration=agentcore.CfnRuntime.NetworkConfigurationProperty(network_mode="PUBLIC"),
            protocol_configuration="HTTP",
            environment_variables=self._environment(config, conversation_environment),
        )
        self.runtime.node.add_dependency(pull_policy)
        self.monitoring = AgentMonitoring(self, "Monitoring", service=config.agent_runtime_name)

        CfnOutput(
            self, "RuntimeArn", value=self.runtime.attr_agent_runtime_arn, description="AgentCore runtime ARN"
        )
        CfnOutput(
            self, "RuntimeId", value=self.runtime.attr_agent_runtime_id, description="AgentCore runtime id"
        )
        CfnOutput(self, "TtsEndpointName", value=config.endpoint_name, description="SageMaker TTS endpoint")
        logger.debug(
            "stack=<%s>, runtime=<%s> | agent runtime defined", construct_id, config.agent_runtime_name
        )

    def _environment(self, config: InfraConfig, conversations: Mapping[str, str] | None) -> dict[str, str]:
        """The app's environment: the endpoint, the model, the metrics, the calls' recognizer and the
        conversation store."""
        return {
            "TTS_ENDPOINT_URL": tts_endpoint_url(config.endpoint_name, self.region),
            "BEDROCK_MODEL_ID": config.bedrock_model_id,
            "AWS_REGION": self.region,
            # One EMF line per answer (agentcore_app.metrics), named after the runtime.
            "AGENT_METRICS": "emf",
            "AGENT_METRICS_SERVICE": config.agent_runtime_name,
            # The role may call Transcribe only when this says transcribe (AgentFoundation).
            "CALL_RECOGNIZER": config.call_recognizer,
            **(conversations or {"CONVERSATION_STORE": "none"}),
        }
