"""The speech models ``speech-infra`` can deploy, each pinned to one immutable Hugging Face revision."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

__all__ = ["MODELS", "ModelSpec", "UnknownModelError", "get_model"]

logger = logging.getLogger(__name__)


class UnknownModelError(ValueError):
    """A model name that is not in :data:`MODELS`."""

    def __init__(self, name: str) -> None:
        """Build the one-line message naming the models that do exist.

        Args:
            name: The name that was asked for.
        """
        self.name = name
        super().__init__(f"unknown model '{name}'; available: {', '.join(sorted(MODELS))}")


@dataclass(frozen=True)
class ModelSpec:
    """One deployable speech model.

    Attributes:
        name: The CLI name, also used in stack, endpoint and S3 prefix names (lowercase, hyphens).
        repo_id: Hugging Face repository of the weights.
        revision: Pinned 40-hex commit of ``repo_id``; a commit is immutable, a branch is not.
        include: Glob patterns (repository paths) of the files the container needs.
        expected_sha256: Known SHA-256 of some files, checked on top of the hub's own LFS hashes.
        container_dockerfile: The container's Dockerfile, relative to the repository root.
        default_instance_type: The SageMaker instance type used when none is given.
        inference_ami_version: The SageMaker inference AMI (``InferenceAmiVersion``) of GPU instances: it
            fixes the host's NVIDIA driver, which must run the CUDA build of torch the container installs
            (``endpoint/Dockerfile``). ``al2-ami-sagemaker-inference-gpu-3-1``: NVIDIA driver 550, CUDA
            12.4 (botocore's SageMaker API model; docs/endpoint.md, "GPU image").
    """

    name: str
    repo_id: str
    revision: str
    include: tuple[str, ...]
    expected_sha256: dict[str, str] = field(default_factory=dict)
    container_dockerfile: str = "endpoint/Dockerfile"
    default_instance_type: str = "ml.g5.xlarge"
    inference_ami_version: str = "al2-ami-sagemaker-inference-gpu-3-1"

    @property
    def stack_name(self) -> str:
        """The name of this model's endpoint stack, e.g. ``Speech-kokoro-82m``."""
        return f"Speech-{self.name}"

    @property
    def construct_suffix(self) -> str:
        """The name made fit for construct ids and output names: ``kokoro-82m`` → ``Kokoro82m``."""
        return "".join(part[:1].upper() + part[1:] for part in self.name.replace("_", "-").split("-") if part)

    @property
    def model_prefix(self) -> str:
        """Key prefix of every revision of this model, e.g. ``models/kokoro-82m/``."""
        return f"models/{self.name}/"

    @property
    def endpoint_name(self) -> str:
        """The SageMaker endpoint name (fixed, so other stacks and the CLIs can find it without lookups)."""
        return f"strands-voice-{self.name}"

    @property
    def s3_prefix(self) -> str:
        """Key prefix of the weights; the revision is part of it, so bumping it writes a new prefix."""
        return f"{self.model_prefix}{self.revision}/"


MODELS: dict[str, ModelSpec] = {
    "kokoro-82m": ModelSpec(
        name="kokoro-82m",
        repo_id="hexgrad/Kokoro-82M",
        revision="f3ff3571791e39611d31c381e3a41a3af07b4987",
        include=("config.json", "kokoro-v1_0.pth", "voices/*.pt"),
        expected_sha256={
            "kokoro-v1_0.pth": "496dba118d1a58f5f3db2efc88dbdc216e0483fc89fe6e47ee1f2c53f18ad1e4"
        },
    ),
}


def get_model(name: str) -> ModelSpec:
    """Look a model up by its CLI name.

    Args:
        name: e.g. ``kokoro-82m`` (case-insensitive).

    Returns:
        The model's spec.

    Raises:
        UnknownModelError: no such model.
    """
    spec = MODELS.get(name.strip().lower())
    if spec is None:
        raise UnknownModelError(name)
    logger.debug("model=<%s> | resolved", spec.name)
    return spec
