"""strands-voice infrastructure: CDK stacks for the TTS endpoint and the voice agent, and the speech-infra and
agent-infra CLIs that deploy them (see docs/infrastructure.md)."""

__all__: list[str] = []
