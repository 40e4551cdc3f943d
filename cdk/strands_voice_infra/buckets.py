"""The one way this project makes an S3 bucket: private, encrypted, TLS 1.2 only, owner-enforced."""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_s3 as s3
from constructs import Construct

__all__ = ["private_bucket"]


def private_bucket(scope: Construct, construct_id: str, **kwargs: Any) -> s3.Bucket:
    """An S3 bucket no one outside the account reaches, readable only over TLS 1.2 or later.

    Args:
        scope: The construct that owns the bucket.
        construct_id: The bucket's construct id.
        **kwargs: The bucket's own settings (versioning, lifecycle, removal policy, access logs).

    Returns:
        The bucket: S3-managed encryption, SSL enforced, TLS 1.2 minimum, public access blocked, object
        ownership enforced for the bucket owner.
    """
    return s3.Bucket(
        scope,
        construct_id,
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=True,
        minimum_tls_version=1.2,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        **kwargs,
    )
