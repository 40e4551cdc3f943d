"""The base of the tests' stand-in LLMs: a Strands ``Model`` whose subclasses only write ``stream``."""

from __future__ import annotations

from typing import Any

from strands.models.model import Model
from strands.types.content import Messages


class StandInModel(Model):
    """Keeps the config Strands asks for; has no structured output (the tests never ask for it).

    Args:
        model_id: A name for logs and traces.
    """

    def __init__(self, model_id: str) -> None:
        self.config: dict[str, Any] = {"model_id": model_id}

    def update_config(self, **model_config: Any) -> None:  # type: ignore[override]
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:  # type: ignore[override]
        return self.config

    async def structured_output(  # type: ignore[override]
        self, output_model: Any, prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> Any:
        raise NotImplementedError
        yield {}
