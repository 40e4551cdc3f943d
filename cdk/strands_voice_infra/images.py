"""A service's container image: the asset built from this checkout, and the one policy that pulls it."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from aws_cdk import Stack
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam

from .config import image_excludes
from .nag import suppress

__all__ = ["ECR_LOGIN_REASON", "image_pull_statements", "service_image"]

#: Why ``ecr:GetAuthorizationToken`` on ``*`` is acknowledged.
ECR_LOGIN_REASON: Final = (
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


def service_image(
    stack: Stack,
    *,
    repo_root: Path,
    dockerfile: str,
    platform: ecr_assets.Platform,
    display_name: str,
    role: iam.IRole,
) -> tuple[ecr_assets.DockerImageAsset, iam.Policy]:
    """The stack's ``Image`` asset and the ``ImagePullPolicy`` that lets ``role`` pull it.

    Args:
        stack: The stack that owns both.
        repo_root: The Docker build context (this checkout).
        dockerfile: The Dockerfile, relative to ``repo_root``.
        platform: The image's platform.
        display_name: How the CDK CLI names the asset.
        role: The service role that pulls the image.

    Returns:
        The image asset and the pull policy (a resource that pulls should depend on the policy).
    """
    image = ecr_assets.DockerImageAsset(
        stack,
        "Image",
        directory=str(repo_root),
        file=dockerfile,
        platform=platform,
        exclude=image_excludes(repo_root, dockerfile),
        display_name=display_name,
    )
    pull_policy = iam.Policy(stack, "ImagePullPolicy", roles=[role], statements=image_pull_statements(image))
    suppress(pull_policy, "AwsSolutions-IAM5", ECR_LOGIN_REASON, applies_to=["Resource::*"])
    return image, pull_policy
