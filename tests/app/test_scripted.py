"""The scripted stand-in's per-turn script: a subclass varies the answer with what was said."""

from __future__ import annotations

from agentcore_app.scripted import ScriptedModel, ScriptedModelConfig
from strands import Agent
from strands.types.content import Messages


class StopAware(ScriptedModel):
    """Answers "Okay." at once when the caller said "stop"; the long answer otherwise."""

    def __init__(self) -> None:
        super().__init__(text="The long answer goes on.", first_sentence_s=0.01, total_s=0.02, remember=True)

    def script_for(self, messages: Messages) -> ScriptedModelConfig:
        last = " ".join(str(block.get("text", "")) for block in messages[-1]["content"]).lower()
        if "stop" in last:
            return {**self.config, "text": "Okay.", "total_s": 0.0, "remember": False}
        return self.config


def test_a_turns_script_comes_from_script_for_and_leaves_the_config_alone() -> None:
    model = StopAware()
    agent = Agent(model=model, callback_handler=None)
    assert str(agent("Tell me the plan.")).strip() == "The long answer goes on."
    assert str(agent("Stop, please.")).strip() == "Okay."
    # The next turn is scripted by the configuration again (remember: it opens with the question before).
    assert str(agent("And then?")).strip() == "Earlier you asked: Stop, please. The long answer goes on."
    assert model.get_config()["text"] == "The long answer goes on." and model.get_config()["total_s"] == 0.02
