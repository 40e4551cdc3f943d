"""SpeechModelCache: a custom resource copying the pinned model snapshot from Hugging Face into the bucket.

The copy runs in AWS (a Lambda function streaming hub → S3), not on the user's machine: nothing large
crosses the user's uplink, and the revision pin, the include patterns and the expected hashes live in the
template. CloudFormation only calls the function when those properties change, and the function skips
files already in S3 with the same source hash, so re-deploying never re-uploads unchanged files.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from aws_cdk import CfnOutput, CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from .models import ModelSpec
from .speech_foundation import SNAPSHOT_COPY_LOG_GROUP

__all__ = ["LAMBDA_SOURCE_DIR", "SpeechModelCacheStack"]

logger = logging.getLogger(__name__)

#: The function's code: one standard-library module, ``hf_snapshot_to_s3.py``.
LAMBDA_SOURCE_DIR = Path(__file__).resolve().parent / "lambda_src"


class SpeechModelCacheStack(Stack):
    """Puts each model's pinned snapshot under its prefix of the weights bucket.

    Attributes:
        model_data_uris: ``s3://bucket/models/<name>/<revision>/`` of each model, by model name, resolved
            only after the copy succeeded (so an endpoint stack using it waits for the weights).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket: s3.IBucket,
        copy_role: iam.IRole,
        models: list[ModelSpec],
        **kwargs: Any,
    ) -> None:
        """Create the copy function (shared) and one snapshot resource per model.

        Args:
            scope: The app.
            construct_id: The stack name.
            bucket: The weights bucket (from SpeechFoundation).
            copy_role: The copy function's role (from SpeechFoundation, which holds all grants on the bucket).
            models: The models to cache.
            **kwargs: Passed to ``Stack``.
        """
        super().__init__(scope, construct_id, **kwargs)

        function = self._copy_function(copy_role)

        self.model_data_uris: dict[str, str] = {}
        for spec in models:
            snapshot = CustomResource(
                self,
                f"Snapshot{spec.construct_suffix}",
                service_token=function.function_arn,
                resource_type="Custom::HuggingFaceSnapshot",
                properties={
                    "Bucket": bucket.bucket_name,
                    "Prefix": spec.s3_prefix,
                    "RepoId": spec.repo_id,
                    "Revision": spec.revision,
                    "Include": list(spec.include),
                    "ExpectedSha256": dict(spec.expected_sha256),
                },
            )
            self.model_data_uris[spec.name] = snapshot.get_att_string("S3Uri")
            CfnOutput(
                self,
                f"ModelDataUri{spec.construct_suffix}",
                value=self.model_data_uris[spec.name],
                description=f"{spec.repo_id}@{spec.revision[:12]} in S3",
            )

        logger.debug("stack=<%s>, models=<%d> | model cache defined", construct_id, len(models))

    def _copy_function(self, copy_role: iam.IRole) -> lambda_.Function:
        """The one copy function every model's snapshot resource calls, and its log group."""
        log_group = logs.LogGroup(
            self,
            "SnapshotCopyLogs",
            log_group_name=SNAPSHOT_COPY_LOG_GROUP,
            retention=logs.RetentionDays.ONE_MONTH,
            removal_policy=RemovalPolicy.DESTROY,
        )
        return lambda_.Function(
            self,
            "SnapshotCopyFunction",
            description="Streams pinned Hugging Face files into S3, skipping files already there",
            runtime=lambda_.Runtime.PYTHON_3_14,
            architecture=lambda_.Architecture.ARM_64,
            handler="hf_snapshot_to_s3.handler",
            code=lambda_.Code.from_asset(
                str(LAMBDA_SOURCE_DIR), exclude=["__pycache__", "*.pyc", "__init__.py"]
            ),
            timeout=Duration.minutes(15),
            memory_size=1024,
            role=copy_role,
            log_group=log_group,
        )
