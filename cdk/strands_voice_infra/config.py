"""Deployment settings shared by the app, the stacks and the CLIs, with validation and CDK-context parsing."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .models import ModelSpec, get_model

__all__ = [
    "AGENT_RUNTIME_NAME",
    "CDK_JSON",
    "CONVERSATION_STORES",
    "DEFAULT_BEDROCK_MODEL_ID",
    "DOCKER_EXCLUDES",
    "REPO_ROOT",
    "VARIANT_NAME",
    "ConfigError",
    "InfraConfig",
    "feature_flags",
    "image_excludes",
    "is_gpu_instance",
]

logger = logging.getLogger(__name__)

#: The repository root (the Docker build context of both images): ``cdk/strands_voice_infra/`` is two below.
REPO_ROOT = Path(__file__).resolve().parents[2]

#: ``cdk/cdk.json``: the app command for the plain ``cdk`` CLI and the feature flags of the app.
CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"

#: The endpoint's only production variant.
VARIANT_NAME = "AllTraffic"

#: Default Bedrock model of the voice agent (a US cross-region inference profile).
DEFAULT_BEDROCK_MODEL_ID = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

#: Where the deployed agent keeps conversations (the app's ``CONVERSATION_STORE``): ``file`` (the runtime's
#: own disk: lost with its session's microVM), ``s3``, ``agentcore-memory`` or ``none``.
CONVERSATION_STORES: tuple[str, ...] = ("s3", "agentcore-memory", "file", "none")

#: AgentCore runtime name: letters, digits and underscores only (AgentCore's rule).
AGENT_RUNTIME_NAME = "strands_voice_agent"

#: Paths left out of the Docker build context (and of the asset hash): VCS, environments, caches, build
#: outputs and anything no image needs. A ``.dockerignore`` at the repository root is honoured on top.
DOCKER_EXCLUDES: tuple[str, ...] = (
    ".git",
    ".github",
    ".ci",
    "**/.venv",
    "**/venv",
    "**/node_modules",
    "**/cdk.out",
    "**/__pycache__",
    "**/*.pyc",
    "**/.mypy_cache",
    "**/.ruff_cache",
    "**/.pytest_cache",
    "**/.hypothesis",
    "**/*.egg-info",
    ".whl",
    ".gl",
    "out",
    "artifacts",
    "tests",
    "docs",
    ".idea",
    ".vscode",
)

_INSTANCE_TYPE = re.compile(r"^ml\.[a-z0-9-]+\.[a-z0-9]+$")
#: NVIDIA GPU instance families (ml.g4dn, ml.g5, ml.g6, ml.g6e, ml.p4d, ml.p5, ...): they take a GPU AMI.
_GPU_INSTANCE = re.compile(r"^ml\.(g\d|p\d)[a-z0-9-]*\.")
_BEDROCK_MODEL_ID = re.compile(
    r"^(arn:aws[a-z-]*:bedrock:[a-z0-9-]*:\d{0,12}:[a-z-]+/[A-Za-z0-9.:_/-]+|[A-Za-z0-9.:_-]+)$"
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The app's ``CALL_RECOGNIZER``: Whisper in the app's own CPU, or Amazon Transcribe (in a language).
_CALL_RECOGNIZER = re.compile(r"^(whisper|transcribe(:[a-z]{2,3}-[A-Z]{2})?)$")


def is_gpu_instance(instance_type: str) -> bool:
    """True for an NVIDIA GPU instance type (``ml.g5.xlarge``), which runs a GPU inference AMI."""
    return bool(_GPU_INSTANCE.match(instance_type))


def image_excludes(repo_root: Path, dockerfile: str) -> list[str]:
    """What to leave out of one image's build context: :data:`DOCKER_EXCLUDES`, then the Dockerfile's own
    ``<Dockerfile>.dockerignore`` (BuildKit's per-Dockerfile ignore file) when it has one.

    CDK stages (and hashes) only what is left, so the image is rebuilt when a file it copies changes and
    not when an unrelated one does.

    Args:
        repo_root: The build context.
        dockerfile: The Dockerfile, relative to ``repo_root``.

    Returns:
        Patterns in ``.dockerignore`` syntax (later patterns win).
    """
    patterns = list(DOCKER_EXCLUDES)
    own = repo_root / f"{dockerfile}.dockerignore"
    if own.is_file():
        for line in own.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                patterns.append(line)
        patterns.append(f"!{dockerfile}.dockerignore")
    # CDK re-includes only a top-level Dockerfile ('!' + basename); this one may sit in a subdirectory.
    patterns.append(f"!{dockerfile}")
    return patterns


def feature_flags() -> dict[str, Any]:
    """The CDK context of ``cdk/cdk.json`` (the recommended feature flags), for apps built in-process."""
    try:
        context = json.loads(CDK_JSON.read_text(encoding="utf-8")).get("context", {})
    except FileNotFoundError:
        logger.warning("path=<%s> | cdk.json not found; synthesizing without feature flags", CDK_JSON)
        return {}
    return dict(context)


class ConfigError(ValueError):
    """A setting is out of range or malformed; the message is one line meant for the user."""


def _as_int(value: Any, name: str) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None


def _as_float(value: Any, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}") from None


def _as_bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")


@dataclass(frozen=True)
class InfraConfig:
    """Everything the stacks are parameterised by.

    Attributes:
        speech_model: The model served by the SageMaker endpoint.
        instance_type: SageMaker instance type of the endpoint; defaults to the model's (``ml.g5.xlarge``).
        min_instances: Autoscaling floor, also the initial instance count (at least 1).
        max_instances: Autoscaling ceiling.
        target_concurrency: Target of the target-tracking policy: concurrent requests per instance.
        scale_in_cooldown_s: Seconds after a scale-in before another.
        scale_out_cooldown_s: Seconds after a scale-out before another.
        network_isolation: Run the model container without network access (it needs none).
        container_environment: Extra environment variables for the endpoint container.
        bedrock_model_id: The agent's Bedrock model or inference profile id (or ARN).
        agent_runtime_name: The AgentCore runtime's name.
        repo_root: The Docker build context of both images.
        conversation_store: Where the agent keeps conversations (:data:`CONVERSATION_STORES`).
        conversation_prefix: The S3 key prefix of the conversations (``s3`` store).
        conversation_retention_days: Days a conversation is kept (S3 lifecycle, or memory event expiry).
        call_recognizer: The app's ``CALL_RECOGNIZER`` for spoken calls: ``whisper`` (offline, in the
            app's CPU) or ``transcribe`` / ``transcribe:<language>`` (the runtime role may then call
            ``transcribe:StartStreamTranscription``).
        alarm_email: An address the speech alarms notify (through a new SNS topic); empty: none.
        alarm_topic_arn: An existing SNS topic the speech alarms notify; empty: none.
        first_chunk_p95_alarm_ms: The first-chunk latency p95 (ms) that raises the alarm.
        error_rate_alarm_percent: The endpoint error rate (% of requests) that raises the alarm.
        sessions_alarm_percent: Sessions in use, as % of an instance's limit, that raise the alarm.
    """

    speech_model: ModelSpec
    instance_type: str = ""
    min_instances: int = 1
    max_instances: int = 2
    target_concurrency: float = 4.0
    scale_in_cooldown_s: int = 300
    scale_out_cooldown_s: int = 60
    network_isolation: bool = True
    container_environment: Mapping[str, str] = field(default_factory=dict)
    bedrock_model_id: str = DEFAULT_BEDROCK_MODEL_ID
    agent_runtime_name: str = AGENT_RUNTIME_NAME
    repo_root: Path = REPO_ROOT
    conversation_store: str = "s3"
    conversation_prefix: str = "conversations/"
    conversation_retention_days: int = 30
    call_recognizer: str = "whisper"
    alarm_email: str = ""
    alarm_topic_arn: str = ""
    first_chunk_p95_alarm_ms: float = 1500.0
    error_rate_alarm_percent: float = 5.0
    sessions_alarm_percent: float = 80.0

    def __post_init__(self) -> None:
        """Fill the model's default instance type and validate every field.

        Raises:
            ConfigError: a setting is invalid.
        """
        if not self.instance_type:
            object.__setattr__(self, "instance_type", self.speech_model.default_instance_type)
        object.__setattr__(self, "repo_root", Path(self.repo_root).resolve())
        if not _INSTANCE_TYPE.match(self.instance_type):
            raise ConfigError(f"instance type must look like ml.g5.xlarge, got {self.instance_type!r}")
        if self.min_instances < 1:
            raise ConfigError(f"min instances must be at least 1, got {self.min_instances}")
        if self.max_instances < self.min_instances:
            raise ConfigError(
                f"max instances ({self.max_instances}) must be at least min instances ({self.min_instances})"
            )
        if not 0 < self.target_concurrency <= 10_000:
            raise ConfigError(f"target concurrency must be in (0, 10000], got {self.target_concurrency}")
        if self.scale_in_cooldown_s < 0 or self.scale_out_cooldown_s < 0:
            raise ConfigError("cooldowns must not be negative")
        if not _BEDROCK_MODEL_ID.match(self.bedrock_model_id):
            raise ConfigError(f"not a Bedrock model id or ARN: {self.bedrock_model_id!r}")
        if not re.match(r"^[a-zA-Z][a-zA-Z0-9_]{0,47}$", self.agent_runtime_name):
            raise ConfigError(
                f"AgentCore runtime names are [a-zA-Z][a-zA-Z0-9_]{{0,47}}: {self.agent_runtime_name!r}"
            )
        if self.conversation_store not in CONVERSATION_STORES:
            raise ConfigError(
                f"conversation store must be one of {', '.join(CONVERSATION_STORES)}, "
                f"got {self.conversation_store!r}"
            )
        segments = self.conversation_prefix.split("/")[:-1]
        if not re.match(r"^[A-Za-z0-9!_.*'()/-]{1,200}/$", self.conversation_prefix) or any(
            segment in ("", ".", "..") for segment in segments
        ):
            raise ConfigError(
                f"conversation prefix must be S3 key segments ending in '/': {self.conversation_prefix!r}"
            )
        if not 1 <= self.conversation_retention_days <= 365:
            raise ConfigError(
                f"conversation retention must be 1 to 365 days, got {self.conversation_retention_days}"
            )
        if not _CALL_RECOGNIZER.match(self.call_recognizer):
            raise ConfigError(
                f"call recognizer must be whisper, transcribe or transcribe:<language> (ja-JP), "
                f"got {self.call_recognizer!r}"
            )
        if self.alarm_email and not re.match(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", self.alarm_email):
            raise ConfigError(f"not an email address: {self.alarm_email!r}")
        if self.alarm_topic_arn and not re.match(
            r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$", self.alarm_topic_arn
        ):
            raise ConfigError(f"not an SNS topic ARN: {self.alarm_topic_arn!r}")
        if self.first_chunk_p95_alarm_ms <= 0 or not 0 < self.error_rate_alarm_percent <= 100:
            raise ConfigError("alarm thresholds must be positive (error rate at most 100%)")
        if not 0 < self.sessions_alarm_percent <= 100:
            raise ConfigError(f"sessions alarm must be in (0, 100] %, got {self.sessions_alarm_percent}")
        for key in self.container_environment:
            if not _ENV_NAME.match(key):
                raise ConfigError(f"not an environment variable name: {key!r}")

    @property
    def uses_transcribe(self) -> bool:
        """Whether the app's spoken calls recognize with Amazon Transcribe."""
        return self.call_recognizer.startswith("transcribe")

    @property
    def endpoint_name(self) -> str:
        """The SageMaker endpoint's name."""
        return self.speech_model.endpoint_name

    def with_overrides(self, **changes: Any) -> InfraConfig:
        """A copy with the given fields replaced (``None`` values are ignored), validated again."""
        return replace(self, **{key: value for key, value in changes.items() if value is not None})

    @classmethod
    def from_context(cls, context: Mapping[str, Any]) -> InfraConfig:
        """Read settings from CDK context (``cdk -c key=value`` gives strings, ``cdk.json`` gives JSON).

        Keys: ``speech_model``, ``instance_type``, ``min_instances``, ``max_instances``,
        ``target_concurrency``, ``network_isolation``, ``bedrock_model_id``, ``repo_root``,
        ``conversation_store``, ``conversation_prefix``, ``conversation_retention_days``,
        ``call_recognizer``, ``alarm_email``,
        ``alarm_topic_arn``, ``first_chunk_p95_alarm_ms``, ``error_rate_alarm_percent``,
        ``sessions_alarm_percent``.

        Args:
            context: The context values; missing keys take the defaults.

        Returns:
            The validated configuration.

        Raises:
            ConfigError: a value is invalid.
            UnknownModelError: ``speech_model`` is not a known model.
        """
        values: dict[str, Any] = {"speech_model": get_model(str(context.get("speech_model", "kokoro-82m")))}
        if context.get("instance_type"):
            values["instance_type"] = str(context["instance_type"])
        if context.get("min_instances") is not None:
            values["min_instances"] = _as_int(context["min_instances"], "min_instances")
        if context.get("max_instances") is not None:
            values["max_instances"] = _as_int(context["max_instances"], "max_instances")
        if context.get("target_concurrency") is not None:
            values["target_concurrency"] = _as_float(context["target_concurrency"], "target_concurrency")
        if context.get("network_isolation") is not None:
            values["network_isolation"] = _as_bool(context["network_isolation"], "network_isolation")
        if context.get("bedrock_model_id"):
            values["bedrock_model_id"] = str(context["bedrock_model_id"])
        if context.get("repo_root"):
            values["repo_root"] = Path(str(context["repo_root"])).resolve()
        for key in (
            "conversation_store",
            "conversation_prefix",
            "call_recognizer",
            "alarm_email",
            "alarm_topic_arn",
        ):
            if context.get(key):
                values[key] = str(context[key])
        if context.get("conversation_retention_days") is not None:
            values["conversation_retention_days"] = _as_int(
                context["conversation_retention_days"], "conversation_retention_days"
            )
        for key in ("first_chunk_p95_alarm_ms", "error_rate_alarm_percent", "sessions_alarm_percent"):
            if context.get(key) is not None:
                values[key] = _as_float(context[key], key)
        config = cls(**values)
        logger.debug(
            "model=<%s>, instance_type=<%s> | config read", config.speech_model.name, config.instance_type
        )
        return config
