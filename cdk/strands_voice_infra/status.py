"""Describe what is deployed: the SageMaker endpoint (with its scaling) and the AgentCore runtime."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from .aws import AwsTarget
from .config import VARIANT_NAME

__all__ = [
    "describe_endpoint",
    "describe_runtime",
    "find_runtime",
    "format_endpoint",
    "format_runtime",
]

logger = logging.getLogger(__name__)


def describe_endpoint(target: AwsTarget, endpoint_name: str) -> dict[str, Any] | None:
    """The endpoint's state, variants (instance type and counts) and autoscaling.

    Args:
        target: Account and region.
        endpoint_name: The SageMaker endpoint.

    Returns:
        ``name``, ``region``, ``status``, ``failure_reason``, ``created``, ``modified``, ``variants``
        (each ``name``, ``instance_type``, ``current``, ``desired``) and ``scaling`` (``min``, ``max``,
        ``policies``); ``None`` when there is no such endpoint.
    """
    sagemaker = target.client("sagemaker")
    try:
        endpoint = sagemaker.describe_endpoint(EndpointName=endpoint_name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ValidationException":
            return None
        raise
    instance_types: dict[str, str] = {}
    try:
        config = sagemaker.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
        instance_types = {v["VariantName"]: v.get("InstanceType", "?") for v in config["ProductionVariants"]}
    except ClientError as exc:
        logger.debug("endpoint=<%s>, error=<%s> | endpoint config unreadable", endpoint_name, exc)
    variants = [
        {
            "name": v["VariantName"],
            "instance_type": instance_types.get(v["VariantName"], "?"),
            "current": v.get("CurrentInstanceCount"),
            "desired": v.get("DesiredInstanceCount"),
        }
        for v in endpoint.get("ProductionVariants", [])
    ]
    return {
        "name": endpoint["EndpointName"],
        "arn": endpoint.get("EndpointArn"),
        "region": target.region,
        "status": endpoint["EndpointStatus"],
        "failure_reason": endpoint.get("FailureReason"),
        "created": str(endpoint.get("CreationTime", "")),
        "modified": str(endpoint.get("LastModifiedTime", "")),
        "variants": variants,
        "scaling": _scaling(target, endpoint_name),
    }


def _scaling(target: AwsTarget, endpoint_name: str) -> dict[str, Any] | None:
    resource_id = f"endpoint/{endpoint_name}/variant/{VARIANT_NAME}"
    autoscaling = target.client("application-autoscaling")
    try:
        targets = autoscaling.describe_scalable_targets(
            ServiceNamespace="sagemaker", ResourceIds=[resource_id]
        )
        policies = autoscaling.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=resource_id)
    except ClientError as exc:
        logger.debug("resource=<%s>, error=<%s> | scaling unreadable", resource_id, exc)
        return None
    found = targets.get("ScalableTargets", [])
    if not found:
        return None
    return {
        "min": found[0]["MinCapacity"],
        "max": found[0]["MaxCapacity"],
        "policies": [
            {
                "name": p["PolicyName"],
                "metric": p.get("TargetTrackingScalingPolicyConfiguration", {})
                .get("PredefinedMetricSpecification", {})
                .get("PredefinedMetricType"),
                "target": p.get("TargetTrackingScalingPolicyConfiguration", {}).get("TargetValue"),
            }
            for p in policies.get("ScalingPolicies", [])
        ],
    }


def format_endpoint(info: dict[str, Any]) -> list[str]:
    """Human-readable lines for :func:`describe_endpoint`'s result."""
    lines = [
        f"endpoint   {info['name']} ({info['region']})",
        f"status     {info['status']}"
        + (f": {info['failure_reason']}" if info.get("failure_reason") else ""),
    ]
    for v in info["variants"]:
        lines.append(
            f"variant    {v['name']}: {v['instance_type']}, {v['current']} running (desired {v['desired']})"
        )
    scaling = info.get("scaling")
    if scaling:
        lines.append(f"scaling    {scaling['min']} to {scaling['max']} instances")
        for p in scaling["policies"]:
            lines.append(f"policy     {p['name']}: {p['metric']} target {p['target']}")
    else:
        lines.append("scaling    none registered")
    lines.append(f"updated    {info['modified'] or info['created']}")
    return lines


def _runtimes(target: AwsTarget) -> Iterator[dict[str, Any]]:
    control = target.client("bedrock-agentcore-control")
    token: str | None = None
    while True:
        page = control.list_agent_runtimes(**({"nextToken": token} if token else {}))
        yield from page.get("agentRuntimes", [])
        token = page.get("nextToken")
        if not token:
            return


def find_runtime(target: AwsTarget, runtime_name: str) -> dict[str, Any] | None:
    """The runtime summary (``agentRuntimeId``, ``agentRuntimeArn``, ...) named ``runtime_name``, if any."""
    return next((r for r in _runtimes(target) if r.get("agentRuntimeName") == runtime_name), None)


def describe_runtime(target: AwsTarget, runtime_name: str) -> dict[str, Any] | None:
    """The AgentCore runtime's state, image and environment.

    Args:
        target: Account and region.
        runtime_name: The runtime's name.

    Returns:
        ``name``, ``arn``, ``id``, ``status``, ``version``, ``image``, ``environment``, ``updated``;
        ``None`` when there is no such runtime.
    """
    summary = find_runtime(target, runtime_name)
    if summary is None:
        return None
    runtime = target.client("bedrock-agentcore-control").get_agent_runtime(
        agentRuntimeId=summary["agentRuntimeId"]
    )
    artifact = runtime.get("agentRuntimeArtifact", {}).get("containerConfiguration", {})
    return {
        "name": runtime.get("agentRuntimeName", runtime_name),
        "arn": runtime.get("agentRuntimeArn"),
        "id": runtime.get("agentRuntimeId"),
        "status": runtime.get("status"),
        "version": runtime.get("agentRuntimeVersion"),
        "image": artifact.get("containerUri"),
        "environment": dict(runtime.get("environmentVariables") or {}),
        "updated": str(runtime.get("lastUpdatedAt", "")),
    }


def format_runtime(info: dict[str, Any]) -> list[str]:
    """Human-readable lines for :func:`describe_runtime`'s result."""
    lines = [
        f"runtime    {info['name']} (version {info['version']})",
        f"arn        {info['arn']}",
        f"status     {info['status']}",
    ]
    if info.get("image"):
        lines.append(f"image      {info['image']}")
    for key in ("BEDROCK_MODEL_ID", "TTS_ENDPOINT_URL"):
        if key in info["environment"]:
            lines.append(f"env        {key}={info['environment'][key]}")
    if info.get("updated"):
        lines.append(f"updated    {info['updated']}")
    return lines
