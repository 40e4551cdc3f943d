"""Speech-<model>: the TTS container image, SageMaker Model, EndpointConfig, Endpoint and its autoscaling."""

from __future__ import annotations

import logging
from typing import Any

from aws_cdk import CfnOutput, Fn, Stack
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from .config import VARIANT_NAME, InfraConfig, image_excludes, is_gpu_instance
from .monitoring import SpeechMonitoring, endpoint_metrics_environment
from .nag import suppress

__all__ = [
    "ECR_LOGIN_REASON",
    "SCALING_METRIC",
    "VARIANT_NAME",
    "SpeechEndpointStack",
    "image_pull_statements",
]

logger = logging.getLogger(__name__)

#: SageMaker's high-resolution (10 s) concurrency metric: in-flight requests per model copy.
SCALING_METRIC = "SageMakerVariantConcurrentRequestsPerModelHighResolution"

#: Why ``ecr:GetAuthorizationToken`` on ``*`` is acknowledged.
ECR_LOGIN_REASON = (
    "ecr:GetAuthorizationToken is only grantable on '*'; it yields a registry login, while layer pulls are "
    "limited to this image's repository."
)


def image_pull_statements(image: ecr_assets.DockerImageAsset) -> list[iam.PolicyStatement]:
    """What a service role needs to pull ``image`` and nothing else.

    Args:
        image: The image asset (its repository is the CDK bootstrap's asset repository).

    Returns:
        The layer-pull statement on that repository, and ``ecr:GetAuthorizationToken``, which IAM only
        accepts on ``*`` (it returns a registry login, not access to any repository).
    """
    return [
        iam.PolicyStatement(
            sid="PullOwnImage",
            actions=["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
            resources=[image.repository.repository_arn],
        ),
        iam.PolicyStatement(sid="EcrLogin", actions=["ecr:GetAuthorizationToken"], resources=["*"]),
    ]


class SpeechEndpointStack(Stack):
    """One model's real-time endpoint, scaling out on concurrency.

    Attributes:
        image: The container image asset built from ``endpoint/Dockerfile``.
        model: The SageMaker Model.
        endpoint_config: The EndpointConfig.
        endpoint: The Endpoint.
        scalable_target: The Application Auto Scaling target of the variant's instance count.
        monitoring: The dashboard and alarms (:mod:`strands_voice_infra.monitoring`).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: InfraConfig,
        execution_role: iam.IRole,
        model_data_uri: str,
        **kwargs: Any,
    ) -> None:
        """Define the endpoint.

        Args:
            scope: The app.
            construct_id: The stack name (``Speech-<model>``).
            config: Deployment settings (model, instance type, scaling).
            execution_role: The model's SageMaker execution role (from SpeechFoundation).
            model_data_uri: ``s3://.../`` prefix holding the weights (from SpeechModelCache).
            **kwargs: Passed to ``Stack``.
        """
        super().__init__(scope, construct_id, **kwargs)
        spec = config.speech_model

        self.image = ecr_assets.DockerImageAsset(
            self,
            "Image",
            directory=str(config.repo_root),
            file=spec.container_dockerfile,
            platform=ecr_assets.Platform.LINUX_AMD64,
            exclude=image_excludes(config.repo_root, spec.container_dockerfile),
            display_name=f"{spec.name} endpoint image",
        )
        pull_policy = iam.Policy(
            self, "ImagePullPolicy", roles=[execution_role], statements=image_pull_statements(self.image)
        )
        suppress(
            pull_policy,
            "AwsSolutions-IAM5",
            ECR_LOGIN_REASON,
            applies_to=["Resource::*"],
        )

        self.model = sagemaker.CfnModel(
            self,
            "Model",
            execution_role_arn=execution_role.role_arn,
            enable_network_isolation=config.network_isolation,
            primary_container=sagemaker.CfnModel.ContainerDefinitionProperty(
                image=self.image.image_uri,
                mode="SingleModel",
                model_data_source=sagemaker.CfnModel.ModelDataSourceProperty(
                    s3_data_source=sagemaker.CfnModel.S3DataSourceProperty(
                        s3_uri=model_data_uri, s3_data_type="S3Prefix", compression_type="None"
                    )
                ),
                # EMF metrics on (named after the endpoint) unless the configured environment says otherwise.
                environment={
                    **endpoint_metrics_environment(spec.endpoint_name),
                    **config.container_environment,
                },
            ),
        )
        self.model.node.add_dependency(pull_policy)  # the role must be able to pull before SageMaker tries

        self.endpoint_config = sagemaker.CfnEndpointConfig(
            self,
            "EndpointConfig",
            production_variants=[
                sagemaker.CfnEndpointConfig.ProductionVariantProperty(
                    variant_name=VARIANT_NAME,
                    model_name=self.model.attr_model_name,
                    instance_type=config.instance_type,
                    initial_instance_count=config.min_instances,
                    initial_variant_weight=1.0,
                    container_startup_health_check_timeout_in_seconds=900,
                    model_data_download_timeout_in_seconds=900,
                    # The host's NVIDIA driver, chosen to run the image's torch CUDA build (GPU types only).
                    inference_ami_version=(
                        spec.inference_ami_version if is_gpu_instance(config.instance_type) else None
                    ),
                )
            ],
        )
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_name=spec.endpoint_name,
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
        )

        self.scalable_target = appscaling.CfnScalableTarget(
            self,
            "ScalableTarget",
            service_namespace="sagemaker",
            scalable_dimension="sagemaker:variant:DesiredInstanceCount",
            resource_id=Fn.join(
                "", ["endpoint/", self.endpoint.attr_endpoint_name, f"/variant/{VARIANT_NAME}"]
            ),
            min_capacity=config.min_instances,
            max_capacity=config.max_instances,
        )
        appscaling.CfnScalingPolicy(
            self,
            "ConcurrencyScalingPolicy",
            policy_name=f"{spec.endpoint_name}-concurrency",
            policy_type="TargetTrackingScaling",
            scaling_target_id=self.scalable_target.ref,
            target_tracking_scaling_policy_configuration=(
                appscaling.CfnScalingPolicy.TargetTrackingScalingPolicyConfigurationProperty(
                    target_value=config.target_concurrency,
                    predefined_metric_specification=appscaling.CfnScalingPolicy.PredefinedMetricSpecificationProperty(
                        predefined_metric_type=SCALING_METRIC
                    ),
                    scale_in_cooldown=config.scale_in_cooldown_s,
                    scale_out_cooldown=config.scale_out_cooldown_s,
                )
            ),
        )

        self.monitoring = SpeechMonitoring(self, "Monitoring", config=config)

        endpoint_arn = self.format_arn(
            service="sagemaker", resource="endpoint", resource_name=spec.endpoint_name
        )
        CfnOutput(
            self, "EndpointName", value=self.endpoint.attr_endpoint_name, description="SageMaker endpoint"
        )
        CfnOutput(self, "EndpointArn", value=endpoint_arn, description="SageMaker endpoint ARN")
        CfnOutput(self, "ImageUri", value=self.image.image_uri, description="Endpoint container image")
        logger.debug(
            "stack=<%s>, instance_type=<%s> | speech endpoint defined", construct_id, config.instance_type
        )
