"""What the cascade's text model is given: BidiAgent's history made into plain alternating messages."""

from __future__ import annotations

from typing import Any

from strands_voice.cascade._conversation import model_messages


def transcript(role: str, text: str) -> dict[str, Any]:
    return {
        "role": role,
        "content": [{"text": text}],
        "metadata": {"custom": {"bidi": {"kind": "transcript", "status": "complete"}}},
    }


def test_bidi_history_becomes_alternating_messages_without_placeholders() -> None:
    tool_use = {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}}
    result = {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "Sunny."}]}}
    history: list[Any] = [
        transcript("user", "What is the weather?"),
        transcript("assistant", "Let me check."),
        {"role": "assistant", "content": [tool_use]},
        {
            "role": "user",
            "content": [
                {"toolResult": {**result["toolResult"], "content": [{"text": "Tool call started."}]}}
            ],
            "metadata": {"custom": {"bidi": {"kind": "tool_dispatch"}}},
        },
        transcript("assistant", ""),  # an answer cut before a word of it was heard
        {"role": "assistant", "content": [tool_use]},
        {"role": "user", "content": [result], "metadata": {"custom": {"bidi": {"kind": "tool_result"}}}},
        transcript("assistant", "It is sunny."),
    ]
    assert model_messages(history) == [
        {"role": "user", "content": [{"text": "What is the weather?"}]},
        {"role": "assistant", "content": [{"text": "Let me check."}, tool_use]},
        {"role": "user", "content": [result]},
        {"role": "assistant", "content": [{"text": "It is sunny."}]},
    ]
    assert history[4]["content"] == [{"text": ""}]  # the input is left as it was


def test_two_user_turns_in_a_row_are_merged() -> None:
    history: list[Any] = [
        transcript("user", "Hello."),
        transcript("assistant", " "),
        transcript("user", "Anyone?"),
    ]
    assert model_messages(history) == [{"role": "user", "content": [{"text": "Hello."}, {"text": "Anyone?"}]}]
