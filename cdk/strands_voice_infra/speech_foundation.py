"""SpeechFoundation: the model-weights bucket and one least-privilege SageMaker execution role per model."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from aws_cdk import ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from .buckets import private_bucket
from .models import ModelSpec
from .nag import suppress

__all__ = ["SNAPSHOT_COPY_LOG_GROUP", "SpeechFoundationStack"]

logger = logging.getLogger(__name__)

#: Log group of SpeechModelCache's copy function (a fixed name, so its role here can be scoped to it).
SNAPSHOT_COPY_LOG_GROUP = "/aws/lambda/strands-voice-model-cache"


class SpeechFoundationStack(Stack):
    """The long-lived speech resources: weights bucket (retained on destroy) and the roles using it.

    Every IAM grant on the bucket lives here, next to the bucket, so policies name it by a local
    reference (never a cross-stack one) and each wildcard is confined to one model's prefix.

    Attributes:
        bucket: The model-weights bucket.
        access_log_bucket: Receives the weights bucket's server access logs.
        roles: SageMaker execution role of each model, by model name.
        copy_role: Role of SpeechModelCache's snapshot-copy function.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, models: Sequence[ModelSpec], **kwargs: Any
    ) -> None:
        """Create the buckets and one execution role per model.

        Args:
            scope: The app.
            construct_id: The stack name.
            models: The models whose roles to create.
            **kwargs: Passed to ``Stack``.
        """
        super().__init__(scope, construct_id, **kwargs)

        self.access_log_bucket = private_bucket(
            self,
            "AccessLogBucket",
            versioned=True,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[
                s3.LifecycleRule(
                    expiration=Duration.days(365), noncurrent_version_expiration=Duration.days(30)
                )
            ],
        )
        self.bucket = private_bucket(
            self,
            "ModelBucket",
            versioned=True,
            removal_policy=RemovalPolicy.RETAIN,
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="model-bucket/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    noncurrent_version_expiration=Duration.days(30),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                )
            ],
        )

        self.roles: dict[str, iam.Role] = {}
        for spec in models:
            self.roles[spec.name] = self._execution_role(spec)
        self.copy_role = self._copy_role(models)

        CfnOutput(self, "ModelBucketName", value=self.bucket.bucket_name, description="Model-weights bucket")
        logger.debug("stack=<%s>, models=<%d> | speech foundation defined", construct_id, len(models))

    def _execution_role(self, spec: ModelSpec) -> iam.Role:
        """The SageMaker execution role of one model: read its own prefix and write its own endpoint's logs.

        Pulling its image is granted by the endpoint stack, which owns the image asset.
        """
        suffix = spec.construct_suffix
        role = iam.Role(
            self,
            f"SageMakerExecutionRole{suffix}",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description=f"SageMaker execution role of the {spec.name} endpoint (strands-voice)",
        )
        prefix = spec.model_prefix  # every revision of this model
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ReadModelPrefix",
                actions=["s3:GetObject"],
                resources=[self.bucket.arn_for_objects(f"{prefix}*")],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ListModelPrefix",
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
            )
        )
        log_group = self.format_arn(
            service="logs",
            resource="log-group",
            resource_name=f"/aws/sagemaker/Endpoints/{spec.endpoint_name}",
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteEndpointLogs",
                actions=[
                    "logs:CreateLogGroup",
                    "logs:CreateLogStream",
                    "logs:PutLogEvents",
                    "logs:DescribeLogStreams",
                ],
                resources=[log_group, f"{log_group}:log-stream:*"],
            )
        )
        suppress(
            role,
            "AwsSolutions-IAM5",
            "Object and log-stream names are only known at run time; each wildcard is confined to this "
            "model's own S3 prefix and its own endpoint's log group.",
            applies_to=[
                self._object_finding(prefix),
                f"Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:"
                f"/aws/sagemaker/Endpoints/{spec.endpoint_name}:log-stream:*",
            ],
        )
        CfnOutput(
            self, f"ExecutionRoleArn{suffix}", value=role.role_arn, description=f"{spec.name} execution role"
        )
        return role

    def _object_finding(self, prefix: str) -> str:
        """cdk-nag's finding id for ``<bucket ARN>/<prefix>*`` in a policy of this stack."""
        bucket_id = self.get_logical_id(self.bucket.node.default_child)  # type: ignore[arg-type]
        return f"Resource::<{bucket_id}.Arn>/{prefix}*"

    def _copy_role(self, models: Sequence[ModelSpec]) -> iam.Role:
        """The snapshot-copy function's role: write the models' prefixes and its own log group."""
        role = iam.Role(
            self,
            "SnapshotCopyRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Copies pinned Hugging Face snapshots into the strands-voice model bucket",
        )
        prefixes = [spec.model_prefix for spec in models]
        role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteModelPrefixes",
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                resources=[self.bucket.arn_for_objects(f"{prefix}*") for prefix in prefixes],
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="ListModelPrefixes",
                actions=["s3:ListBucket"],
                resources=[self.bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [f"{prefix}*" for prefix in prefixes]}},
            )
        )
        log_group = self.format_arn(
            service="logs",
            resource="log-group",
            resource_name=SNAPSHOT_COPY_LOG_GROUP,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteOwnLogs",
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[f"{log_group}:log-stream:*"],
            )
        )
        suppress(
            role,
            "AwsSolutions-IAM5",
            "Object names come from the pinned snapshot and log-stream names from Lambda at run time; each "
            "wildcard is confined to one model's own prefix or the function's own log group.",
            applies_to=[
                *(self._object_finding(prefix) for prefix in prefixes),
                f"Resource::arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:"
                f"{SNAPSHOT_COPY_LOG_GROUP}:log-stream:*",
            ],
        )
        return role
