"""AWS session and credential checks for the CLIs: one clear line instead of a botocore traceback."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError, ProfileNotFound

__all__ = ["AwsTarget", "CredentialsError", "resolve_target", "stack_exists"]

logger = logging.getLogger(__name__)


class CredentialsError(RuntimeError):
    """No usable AWS credentials or region; the message is one line for the user."""


@dataclass(frozen=True)
class AwsTarget:
    """Where a command acts.

    Attributes:
        session: The boto3 session (profile and region applied).
        account: The caller's account id.
        region: The region.
        profile: The named profile, if one was given.
    """

    session: boto3.Session
    account: str
    region: str
    profile: str | None = None

    def client(self, service: str) -> Any:
        """A boto3 client of ``service`` in this target's region."""
        return self.session.client(service, region_name=self.region)


def resolve_target(profile: str | None = None, region: str | None = None) -> AwsTarget:
    """Find the account and region, proving the credentials work (``sts:GetCallerIdentity``).

    Args:
        profile: A named profile, or ``None`` for the default chain.
        region: A region (``--region``); when ``None``, ``AWS_REGION`` (what Lambda, AgentCore and most
            SDKs set), then what boto3 reads: ``AWS_DEFAULT_REGION``, then the profile's region.

    Returns:
        The target.

    Raises:
        CredentialsError: no profile, no credentials, expired or invalid credentials, or no region.
    """
    region = region or os.environ.get("AWS_REGION", "").strip() or None  # boto3 reads only AWS_DEFAULT_REGION
    try:
        session = boto3.Session(profile_name=profile, region_name=region)
    except ProfileNotFound:
        raise CredentialsError(f"AWS profile '{profile}' not found; check ~/.aws/config") from None
    resolved_region = session.region_name
    if not resolved_region:
        raise CredentialsError("no AWS region configured; set AWS_REGION or pass --region")
    if session.get_credentials() is None:
        raise CredentialsError(
            "no AWS credentials found; configure them (aws configure, aws sso login or AWS_PROFILE) and retry"
        )
    try:
        identity = session.client("sts", region_name=resolved_region).get_caller_identity()
    except NoCredentialsError:
        raise CredentialsError("no AWS credentials found; configure them and retry") from None
    except NoRegionError:
        raise CredentialsError("no AWS region configured; set AWS_REGION or pass --region") from None
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "error")
        raise CredentialsError(f"AWS rejected the credentials ({code}); refresh them and retry") from None
    except BotoCoreError as exc:
        raise CredentialsError(f"could not use the AWS credentials: {exc}") from None
    logger.debug("account=<%s>, region=<%s> | credentials verified", identity["Account"], resolved_region)
    return AwsTarget(session=session, account=identity["Account"], region=resolved_region, profile=profile)


def _describe_stack(target: AwsTarget, name: str) -> dict[str, Any] | None:
    try:
        stacks = target.client("cloudformation").describe_stacks(StackName=name)["Stacks"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            return None
        raise
    return stacks[0] if stacks else None


def stack_exists(target: AwsTarget, name: str) -> bool:
    """Whether CloudFormation stack ``name`` exists (in any state but deleted)."""
    return _describe_stack(target, name) is not None
