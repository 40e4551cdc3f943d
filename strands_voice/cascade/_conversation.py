"""The text model's side of the conversation: what a Strands ``Model`` is given on each call.

``BidiAgent`` keeps its own history (transcript blocks, tool dispatch placeholders, metadata). A text
model needs plain alternating messages: :func:`model_messages` turns either kind into that (metadata
dropped, tool-dispatch placeholders dropped with the tool uses they answer, empty text dropped, empty
messages dropped, consecutive messages of one role merged).
"""

from __future__ import annotations

import copy
from typing import Any

from strands.types.content import ContentBlock, Message, Messages

__all__ = ["model_messages"]


def _is_dispatch(message: Message) -> bool:
    metadata: Any = message.get("metadata") or {}
    return bool(metadata.get("custom", {}).get("bidi", {}).get("kind") == "tool_dispatch")


def _kept_blocks(message: Message) -> list[ContentBlock]:
    return [
        copy.deepcopy(block)
        for block in message.get("content", [])
        if not ("text" in block and not str(block["text"]).strip())
    ]


def _drop_dispatched(out: Messages, dispatch: Message) -> None:
    """Remove the tool uses a dispatch placeholder answers (the real exchange is recorded again later)."""
    ids = {block["toolResult"]["toolUseId"] for block in dispatch["content"] if "toolResult" in block}
    if not out:
        return
    kept = [block for block in out[-1]["content"] if block.get("toolUse", {}).get("toolUseId") not in ids]
    if kept:
        out[-1]["content"] = kept
    else:
        out.pop()


def model_messages(messages: Messages) -> Messages:
    """``messages`` as a text model takes them (see the module docstring); the input is not changed."""
    out: Messages = []
    for message in messages:
        if _is_dispatch(message):
            _drop_dispatched(out, message)
            continue
        blocks = _kept_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message["role"], "content": blocks})
    return out
