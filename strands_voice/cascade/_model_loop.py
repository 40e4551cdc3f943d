"""One answer's model-and-tools loop: the Strands text model on the conversation, its words spoken.

The model's deltas go to :meth:`Response.feed <strands_voice.speech.Response.feed>`, a tool call to
:meth:`Response.step_ended <strands_voice.speech.Response.step_ended>` (what was written before it is
spoken now) and out as a ``BidiToolUseBlocksEvent``; the loop waits for the results ``BidiAgent`` sends
back, then the model goes on. Each model step's words are one assistant transcript (started when it starts
writing, its text and stop once closed: all of it, or only what the caller heard) and one message in the
model's conversation.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from strands.bidi.types.events import (
    BidiOutputEvent,
    BidiToolUseBlocksEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)
from strands.event_loop.streaming import stream_messages
from strands.types.content import ContentBlock, Message
from strands.types.events import ModelStopReason
from strands.types.tools import ToolResult, ToolUse
from strands_voice_protocol.sentences import sentence_ends
from strands_voice_protocol.speech_text import clean_for_speech

from strands_voice.cascade._answer_parts import AnswerParts
from strands_voice.cascade._conversation import model_messages
from strands_voice.speech import Response

__all__ = ["ModelLoop"]

logger = logging.getLogger(__name__)


@dataclass
class _Block:
    """One model step's words: its transcript block and its message in the model's conversation."""

    content_id: str
    message: Message
    text: str = ""


class ModelLoop:
    """The model's turns of one answer (see the module docstring).

    Args:
        parts: The model, the conversation and the ids.
        response: The voice pipeline the words are fed to.
        emit: Where the transcripts and tool calls go (the answer's outlet).
    """

    def __init__(
        self, parts: AnswerParts, response: Response, emit: Callable[[BidiOutputEvent], None]
    ) -> None:
        self.parts = parts
        self.response = response
        self._emit = emit
        self.tool_results: asyncio.Queue[list[ToolResult]] = asyncio.Queue()
        self.pending_tool_ids: set[str] = set()
        self._blocks: list[_Block] = []
        self._blocks_closed = False

    async def run(self) -> None:
        """Run the model (and its tools) until it stops; the response's text ends with it."""
        try:
            while True:
                stop_reason, message = await self._one_turn()
                tool_uses: list[ToolUse] = [
                    block["toolUse"] for block in message["content"] if "toolUse" in block
                ]
                if stop_reason != "tool_use" or not tool_uses:
                    return
                self.response.step_ended()  # what was written before the call is spoken now
                self.pending_tool_ids = {tool_use["toolUseId"] for tool_use in tool_uses}
                self._emit(BidiToolUseBlocksEvent(tool_uses))
                results = await self.tool_results.get()
                self.pending_tool_ids = set()
                self.parts.conversation.append(
                    {"role": "user", "content": [{"toolResult": result} for result in results]}
                )
        except Exception:
            logger.exception("answer_id=<%s> | model failed; the answer ends here", self.parts.answer_id)
        finally:
            self.response.end()

    def cancel_pending_tools(self) -> None:
        """A cut answer's tool calls get an error result now (the conversation stays well-formed)."""
        if self.pending_tool_ids:
            self.parts.conversation.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "toolResult": {
                                "toolUseId": tool_use_id,
                                "status": "error",
                                "content": [{"text": "The caller interrupted before the result."}],
                            }
                        }
                        for tool_use_id in sorted(self.pending_tool_ids)
                    ],
                }
            )
            self.pending_tool_ids = set()

    def close_blocks(self, heard: str | None) -> None:
        """End each turn's transcript: its words, or (``heard`` given) only the part that was heard."""
        if self._blocks_closed:
            return
        self._blocks_closed = True
        remaining = heard.strip() if heard is not None else None
        for block in self._blocks:
            said = block.text
            if remaining is not None:
                size = len(clean_for_speech(block.text))
                said, remaining = remaining[:size].strip(), remaining[size:].lstrip()
                others = [part for part in block.message["content"] if "text" not in part]
                kept: list[ContentBlock] = [{"text": said}] if said else []
                block.message["content"] = kept + others
            if said:
                self._emit(BidiTranscriptDeltaEvent(said, "assistant", block.content_id))
            self._emit(BidiTranscriptStopEvent("assistant", block.content_id))

    async def _one_turn(self) -> tuple[str, Message]:
        parts = self.parts
        block: _Block | None = None
        stream = stream_messages(
            parts.model, parts.system_prompt, model_messages(parts.conversation), parts.tool_specs
        )
        async for event in stream:
            if isinstance(event, ModelStopReason):
                final = copy.deepcopy(event.message)
                if block is not None:
                    block.message["content"] = final["content"]
                else:
                    parts.conversation.append(final)
                return str(event.stop_reason), final
            text = event.get("data") if not event.get("reasoning") else None
            if isinstance(text, str) and text:
                block = block or self._open_block()
                block.text += text
                block.message["content"] = [{"text": block.text}]
                self._mark_text(block.text)
                self.response.feed(text)
        raise RuntimeError("the model's stream ended without a stop reason")

    def _mark_text(self, text: str) -> None:
        marks = self.parts.marks
        now = time.perf_counter()
        marks.setdefault("first_text", now)
        if "first_sentence" not in marks and sentence_ends(text):
            marks["first_sentence"] = now

    def _open_block(self) -> _Block:
        content_id = f"{self.parts.answer_id}-text-{len(self._blocks)}"
        message: Message = {"role": "assistant", "content": []}
        self.parts.conversation.append(message)
        block = _Block(content_id, message)
        self._blocks.append(block)
        self._emit(BidiTranscriptStartEvent("assistant", content_id))
        return block
