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

from .config import VARIANT_NAME, InfraConfig, is_gpu_instance
from .images import service_image
from .monitoring import SpeechMonitoring, endpoint_metrics_environment

__all__ = ["SCALING_METRIC", "VARIANT_NAME", "SpeechEndpointStack"]

logger = logging.getLogger(__name__)

#: SageMaker's high-resolution (10 s) concurrency metric: in-flight requests per model copy.
SCALING_METRIC = "SageMakerVariantConcurrentRequestsPerModelHighResolution"


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
        self.image, pull_policy = service_image(
            self,
            repo_root=config.repo_root,
            dockerfile=spec.container_dockerfile,
            platform=ecr_assets.Platform.LINUX_AMD64,
            display_name=f"{spec.name} endpoint image",
            role=execution_role,
        )
        self.model = self._model(config, execution_role, model_data_uri)
        self.model.node.add_dependency(pull_policy)  # the role must be able to pull before SageMaker tries
        self.endpoint_config = self._endpoint_config(config)
        self.endpoint = sagemaker.CfnEndpoint(
            self,
            "Endpoint",
            endpoint_name=spec.endpoint_name,
            endpoint_config_name=self.endpoint_config.attr_endpoint_config_name,
        )
        self.scalable_target = self._autoscaling(config)
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

    def _model(
        self, config: InfraConfig, execution_role: iam.IRole, model_data_uri: str
    ) -> sagemaker.CfnModel:
        """The SageMaker Model: this stack's image, the weights under ``model_data_uri``, EMF metrics on."""
        spec = config.speech_model
        return sagemaker.CfnModel(
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

    def _endpoint_config(self, config: InfraConfig) -> sagemaker.CfnEndpointConfig:
        """One production variant on the configured instance type, starting at the autoscaling floor."""
        return sagemaker.CfnEndpointConfig(
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
                        config.speech_model.inference_ami_version
                        if is_gpu_instance(config.instance_type)
                        else None
                    ),
                )
            ],
        )

    def _autoscaling(self, config: InfraConfig) -> appscaling.CfnScalableTarget:
        """The variant's instance count between the floor and the ceiling, tracking concurrent requests."""
        scalable_target = appscaling.CfnScalableTarget(
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
            policy_name=f"{config.speech_model.endpoint_name}-concurrency",
            policy_type="TargetTrackingScaling",
            scaling_target_id=scalable_target.ref,
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
        return scalable_target
