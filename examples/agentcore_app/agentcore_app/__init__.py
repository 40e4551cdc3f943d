"""Example Bedrock AgentCore app: a Strands agent that streams its answer as text and speech over SSE."""

from __future__ import annotations

__all__: list[str] = []
