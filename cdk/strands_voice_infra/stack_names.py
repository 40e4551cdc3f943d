"""Stack names, in deployment order (no CDK import: the CLIs read these before deciding to synthesize)."""

from __future__ import annotations

from .models import ModelSpec

__all__ = [
    "AGENT_FOUNDATION",
    "AGENT_RUNTIME",
    "AGENT_STACKS",
    "CDK_TOOLKIT",
    "SPEECH_FOUNDATION",
    "SPEECH_MODEL_CACHE",
    "speech_stack_names",
]

SPEECH_FOUNDATION = "SpeechFoundation"
SPEECH_MODEL_CACHE = "SpeechModelCache"
AGENT_FOUNDATION = "AgentFoundation"
AGENT_RUNTIME = "AgentRuntime"
AGENT_STACKS: tuple[str, ...] = (AGENT_FOUNDATION, AGENT_RUNTIME)
#: The CDK bootstrap stack (asset bucket and image repository); ``deploy`` creates it when missing.
CDK_TOOLKIT = "CDKToolkit"


def speech_stack_names(spec: ModelSpec) -> tuple[str, ...]:
    """The stacks serving ``spec``, in deployment order: the two shared ones, then the model's own."""
    return (SPEECH_FOUNDATION, SPEECH_MODEL_CACHE, spec.stack_name)
