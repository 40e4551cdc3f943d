"""Assemble the CDK app: which stacks exist, their names, the wiring between them, and cdk-nag."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aws_cdk import App, Environment, Stack, Tags

from .agent_foundation import AgentFoundationStack
from .agent_runtime import AgentRuntimeStack
from .config import InfraConfig, feature_flags
from .models import MODELS
from .nag import apply_nag
from .phone_bridge import PhoneBridgeStack
from .speech_endpoint import SpeechEndpointStack
from .speech_foundation import SpeechFoundationStack
from .speech_model_cache import SpeechModelCacheStack
from .stack_names import (
    AGENT_FOUNDATION,
    AGENT_RUNTIME,
    AGENT_STACKS,
    SPEECH_FOUNDATION,
    SPEECH_MODEL_CACHE,
    speech_stack_names,
)

__all__ = [
    "AGENT_FOUNDATION",
    "AGENT_RUNTIME",
    "AGENT_STACKS",
    "PHONE_BRIDGE",
    "SPEECH_FOUNDATION",
    "SPEECH_MODEL_CACHE",
    "InfraApp",
    "build_app",
    "speech_stack_names",
]

logger = logging.getLogger(__name__)

#: The phone bridge's stack (only when asked: ``cdk deploy PhoneBridge -c phone_bridge=1 ...``).
PHONE_BRIDGE = "PhoneBridge"


@dataclass
class InfraApp:
    """A built (not yet synthesized) app.

    Attributes:
        app: The CDK app.
        config: The settings it was built from.
        stacks: Its stacks by name, in deployment order.
    """

    app: App
    config: InfraConfig
    stacks: dict[str, Stack] = field(default_factory=dict)


def build_app(
    config: InfraConfig,
    *,
    speech: bool = True,
    agent: bool = True,
    outdir: str | None = None,
    nag: bool = True,
    phone_bridge: bool = False,
    app: App | None = None,
    context: Mapping[str, Any] | None = None,
) -> InfraApp:
    """Build the app with the speech stacks, the agent stacks, or both.

    The two groups share nothing at synth time: the agent finds the endpoint by its fixed name, so either
    group can be deployed, synthesized or destroyed on its own.

    Args:
        config: Deployment settings.
        speech: Add SpeechFoundation, SpeechModelCache and ``Speech-<model>``.
        agent: Add AgentFoundation and AgentRuntime.
        outdir: Where ``synth`` writes the cloud assembly (a temporary directory when ``None``).
        nag: Apply cdk-nag ``AwsSolutionsChecks`` to every stack.
        phone_bridge: Add PhoneBridge (Twilio to the runtime, :mod:`.phone_bridge`).
        app: An existing app to add to (``cdk/app.py`` passes its own); ``outdir`` and ``context`` are then
            ignored.
        context: Extra CDK context for a new app.

    Returns:
        The app and its stacks.
    """
    if app is None:
        app = App(outdir=outdir, context={**feature_flags(), **dict(context or {})})
    built = InfraApp(app=app, config=config)
    Tags.of(app).add("project", "strands-voice")

    if speech:
        built.stacks.update(_speech_stacks(app, config))
    if agent:
        built.stacks.update(_agent_stacks(app, config))
    if phone_bridge:
        built.stacks[PHONE_BRIDGE] = PhoneBridgeStack(
            app,
            PHONE_BRIDGE,
            repo_root=config.repo_root,
            # The load balancer's access logs need the region at synth time: the CDK CLI's own.
            env=Environment(
                account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")
            ),
            description="strands-voice: the phone bridge (Twilio Media Streams to the runtime) on Fargate",
        )

    if nag:
        apply_nag(app)
    logger.debug("stacks=<%s> | app built", ",".join(built.stacks))
    return built


def _speech_stacks(app: App, config: InfraConfig) -> dict[str, Stack]:
    """SpeechFoundation, SpeechModelCache and the configured model's ``Speech-<model>``, by name."""
    models = list(MODELS.values())
    foundation = SpeechFoundationStack(
        app,
        SPEECH_FOUNDATION,
        models=models,
        description="strands-voice: model-weights bucket (retained) and SageMaker execution roles",
    )
    cache = SpeechModelCacheStack(
        app,
        SPEECH_MODEL_CACHE,
        bucket=foundation.bucket,
        copy_role=foundation.copy_role,
        models=models,
        description="strands-voice: pinned Hugging Face snapshots copied into the model bucket",
    )
    spec = config.speech_model
    endpoint = SpeechEndpointStack(
        app,
        spec.stack_name,
        config=config,
        execution_role=foundation.roles[spec.name],
        model_data_uri=cache.model_data_uris[spec.name],
        description=f"strands-voice: {spec.name} TTS on a SageMaker real-time endpoint",
    )
    return {SPEECH_FOUNDATION: foundation, SPEECH_MODEL_CACHE: cache, spec.stack_name: endpoint}


def _agent_stacks(app: App, config: InfraConfig) -> dict[str, Stack]:
    """AgentFoundation and AgentRuntime, by name."""
    agent_foundation = AgentFoundationStack(
        app,
        AGENT_FOUNDATION,
        config=config,
        description="strands-voice: the voice agent's AgentCore execution role",
    )
    runtime = AgentRuntimeStack(
        app,
        AGENT_RUNTIME,
        config=config,
        role=agent_foundation.role,
        conversation_environment=agent_foundation.conversations.environment,
        description="strands-voice: the voice agent on a Bedrock AgentCore runtime",
    )
    return {AGENT_FOUNDATION: agent_foundation, AGENT_RUNTIME: runtime}
