"""Pick the Strands model behind a voice agent from a short spec string (``--model``, ``VOICE_MODEL``).

A spec is ``<provider>[:<model>][?<option>=<value>&...]``:

- ``bedrock:<model-id>`` (options: ``region``): Amazon Bedrock (``strands.models.bedrock.BedrockModel``).
- ``ollama:<name>`` (options: ``host``, default ``http://localhost:11434``): needs ``strands-agents[ollama]``.
- ``openai:<model-id>`` (options: ``base_url``; the key comes from ``OPENAI_API_KEY``): needs
  ``strands-agents[openai]``. Its client stays open between requests on one event loop
  (:mod:`agentcore_app.kept_client`); :func:`close_model` closes it.
- ``scripted`` (options: ``text``, ``lang`` (``en`` or ``ja``: the answer's language), ``first_sentence_s``,
  ``total_s``, ``remember`` 0/1): the built-in offline stand-in LLM
  (:class:`agentcore_app.scripted.ScriptedModel`). It streams a fixed answer whatever the prompt (with
  ``remember=1`` opened by the previous question); it is never a real model, and
  :attr:`ModelChoice.is_scripted` lets callers say so.

With no spec, :func:`default_model_spec` picks ``bedrock:<BEDROCK_MODEL_ID or the default>`` when boto3
finds AWS credentials, and ``scripted`` otherwise.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from strands_voice_protocol.errors import ConfigurationError, MissingDependencyError

if TYPE_CHECKING:
    from strands.models import Model

__all__ = [
    "DEFAULT_BEDROCK_MODEL_ID",
    "DEFAULT_OLLAMA_HOST",
    "PROVIDERS",
    "ModelChoice",
    "ModelSpecError",
    "aws_credentials_available",
    "close_model",
    "create_model",
    "default_model_spec",
    "parse_model_spec",
]

logger = logging.getLogger(__name__)

# A fast model keeps the time to the first sentence low, which is what a listener hears.
DEFAULT_BEDROCK_MODEL_ID = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
DEFAULT_OLLAMA_HOST = "http://localhost:11434"
PROVIDERS = ("bedrock", "ollama", "openai", "scripted")

_OPTIONS: dict[str, frozenset[str]] = {
    "bedrock": frozenset({"region"}),
    "ollama": frozenset({"host"}),
    "openai": frozenset({"base_url"}),
    "scripted": frozenset({"text", "lang", "first_sentence_s", "total_s", "remember"}),
}


class ModelSpecError(ConfigurationError):
    """A model spec could not be understood; the message says what is accepted."""


@dataclass(frozen=True)
class ModelChoice:
    """A parsed model spec.

    Attributes:
        provider: One of :data:`PROVIDERS`.
        model_id: The provider's model id or name (empty for ``scripted``).
        options: Provider options from the spec's query part.
    """

    provider: str
    model_id: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def is_scripted(self) -> bool:
        """True for the offline stand-in model."""
        return self.provider == "scripted"

    @property
    def spec(self) -> str:
        """The spec without options, e.g. ``bedrock:<model-id>`` or ``scripted``."""
        return self.provider if self.is_scripted else f"{self.provider}:{self.model_id}"

    @property
    def description(self) -> str:
        """A one-line description for people, plain about the stand-in."""
        if self.is_scripted:
            return "scripted (built-in offline stand-in LLM: a fixed answer, not a real model)"
        return f"{self.provider}:{self.model_id}"


def parse_model_spec(spec: str) -> ModelChoice:
    """Parse ``<provider>[:<model>][?options]``.

    Args:
        spec: The spec, e.g. ``bedrock:us.amazon.nova-lite-v1:0`` or ``scripted?total_s=1``.

    Returns:
        The parsed choice.

    Raises:
        ModelSpecError: Unknown provider, missing model id, or an unknown option.
    """
    spec = spec.strip()
    head, _, query = spec.partition("?")
    provider, _, model_id = head.partition(":")
    provider = provider.strip().lower()
    model_id = model_id.strip()
    accepted = "bedrock:<model-id>, ollama:<name>, openai:<model-id> or scripted"
    if provider not in PROVIDERS:
        raise ModelSpecError(f"unknown model {spec!r}: use {accepted}")
    if provider == "scripted":
        if model_id:
            raise ModelSpecError(f"'scripted' takes no model id (got {model_id!r})")
    elif not model_id:
        placeholder = "name" if provider == "ollama" else "model-id"
        raise ModelSpecError(f"{provider!r} needs a model id: {provider}:<{placeholder}>")
    try:
        options = dict(parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)))
    except ValueError:
        raise ModelSpecError(f"cannot read the options {query!r}: write name=value&name=value") from None
    unknown = sorted(set(options) - _OPTIONS[provider])
    if unknown:
        allowed = ", ".join(sorted(_OPTIONS[provider])) or "none"
        raise ModelSpecError(f"unknown option(s) {', '.join(unknown)} for {provider} (accepted: {allowed})")
    return ModelChoice(provider=provider, model_id=model_id, options=options)


def aws_credentials_available() -> bool:
    """Whether boto3 finds AWS credentials (environment, profile, container or instance role)."""
    try:
        import boto3
    except ImportError:
        return False
    try:
        return boto3.Session().get_credentials() is not None
    except Exception:  # a broken profile counts as "none configured"
        logger.debug("credential lookup failed", exc_info=True)
        return False


def default_model_spec() -> str:
    """``bedrock:<BEDROCK_MODEL_ID or default>`` when AWS credentials are configured, else ``scripted``."""
    if aws_credentials_available():
        return f"bedrock:{os.environ.get('BEDROCK_MODEL_ID') or DEFAULT_BEDROCK_MODEL_ID}"
    return "scripted"


def _float_option(choice: ModelChoice, name: str) -> float | None:
    value = choice.options.get(name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ModelSpecError(f"option {name} must be a number of seconds (got {value!r})") from None
    if not number >= 0:  # also rejects NaN
        raise ModelSpecError(f"option {name} must be zero or more (got {value!r})")
    return number


def create_model(spec: str | ModelChoice) -> Model:
    """Build the Strands model a spec names.

    Args:
        spec: A spec string or an already parsed :class:`ModelChoice`.

    Returns:
        A Strands ``Model``. It holds no conversation: share it between agents freely (an ``openai`` model
        on one event loop; :func:`close_model` on that loop lets go of its connections).

    Raises:
        ModelSpecError: The spec is malformed.
        MissingDependencyError: The provider's optional dependency is not installed.
    """
    choice = spec if isinstance(spec, ModelChoice) else parse_model_spec(spec)
    if choice.provider == "scripted":
        from .scripted import SCRIPTED_ANSWERS, ScriptedModel

        scripted_options: dict[str, Any] = {}
        if "lang" in choice.options:
            if choice.options["lang"] not in SCRIPTED_ANSWERS:
                raise ModelSpecError(f"option lang must be one of {', '.join(SCRIPTED_ANSWERS)}")
            scripted_options["text"] = SCRIPTED_ANSWERS[choice.options["lang"]]
        if "text" in choice.options:
            if not choice.options["text"].strip():
                raise ModelSpecError("option text must not be empty")
            scripted_options["text"] = choice.options["text"]
        for name in ("first_sentence_s", "total_s"):
            value = _float_option(choice, name)
            if value is not None:
                scripted_options[name] = value
        if "remember" in choice.options:
            if choice.options["remember"] not in ("0", "1"):
                raise ModelSpecError("option remember must be 0 or 1")
            scripted_options["remember"] = choice.options["remember"] == "1"
        return ScriptedModel(**scripted_options)
    if choice.provider == "bedrock":
        from strands.models.bedrock import BedrockModel

        # ?region=, else AWS_REGION (Lambda, AgentCore, --region), else boto3's AWS_DEFAULT_REGION / profile.
        region = choice.options.get("region") or os.environ.get("AWS_REGION", "").strip() or None
        return BedrockModel(model_id=choice.model_id, region_name=region)
    if choice.provider == "ollama":
        try:
            from strands.models.ollama import OllamaModel
        except ImportError as exc:
            raise MissingDependencyError(
                "the ollama model needs the ollama client: uv pip install 'strands-agents[ollama]'"
            ) from exc
        return OllamaModel(choice.options.get("host", DEFAULT_OLLAMA_HOST), model_id=choice.model_id)
    try:
        from agentcore_app.kept_client import KeptClientOpenAIModel
    except ImportError as exc:
        raise MissingDependencyError(
            "the openai model needs the openai client: uv pip install 'strands-agents[openai]'"
        ) from exc
    client_args: dict[str, Any] = {}
    if "base_url" in choice.options:
        client_args["base_url"] = choice.options["base_url"]
    return KeptClientOpenAIModel(client_args=client_args or None, model_id=choice.model_id)


async def close_model(model: Model | None) -> None:
    """Let go of what a model from :func:`create_model` holds open (an ``openai`` model's kept client; the
    others hold nothing to close). Call it on the event loop that used the model."""
    close = getattr(model, "aclose", None)
    if close is not None:
        await close()
