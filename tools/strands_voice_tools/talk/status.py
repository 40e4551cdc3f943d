"""The live conversation's status line: listening / thinking / speaking, and what was heard and said.

:class:`StatusLine` is a ``BidiAgent`` output stream. It follows the agent's events (a response starts:
thinking; its audio starts: speaking; a barge-in: listening) and, while the speakers still play what the
agent sent, stays on speaking until they fall silent (it looks every tenth of a second). Each finished
transcript is printed as it comes (``you: ...`` / ``agent: ...``). On a terminal the status is one line
redrawn in place; otherwise each change is a line of its own (``status: speaking``), so a log reads in
order.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, Final, Protocol, TextIO

from strands.bidi.types.events import (
    BidiAudioDeltaEvent,
    BidiBargeInEvent,
    BidiOutputEvent,
    BidiResponseStartEvent,
    BidiResponseStopEvent,
)
from strands_voice_protocol.aio.tasks import cancel_and_wait

from strands_voice_tools.talk.streams import transcript_line

__all__ = ["LISTENING", "SPEAKING", "THINKING", "StatusLine"]

LISTENING: Final = "listening"
THINKING: Final = "thinking"
SPEAKING: Final = "speaking"
_LOOK_S: Final = 0.1
_MARKS: Final = {LISTENING: "●", THINKING: "…", SPEAKING: "▶"}


class Playing(Protocol):
    """What the status asks the speakers."""

    @property
    def queued_s(self) -> float:
        """Seconds of audio still to play."""


class StatusLine:
    """A ``BidiAgent`` output: the status line and the transcripts (see the module docstring).

    Args:
        speakers: The speakers the agent speaks through (speaking lasts while they play); None: speaking
            ends with the response.
        out: Where the status goes (standard error by default).
        show: Prints each transcript line (standard output by default).
    """

    def __init__(
        self,
        speakers: Playing | None = None,
        *,
        out: TextIO | None = None,
        show: Callable[[str], None] | None = None,
    ) -> None:
        self._speakers = speakers
        self._out = out or sys.stderr
        self._show = show or (lambda line: print(line, flush=True))
        self._terminal = self._out.isatty()
        self.state = LISTENING
        self._answering = False
        self._watch: asyncio.Task[None] | None = None

    async def start(self, agent: Any = None) -> None:
        """Show listening; follow the speakers while they play."""
        self._draw()
        if self._speakers is not None:
            self._watch = asyncio.create_task(self._follow_speakers(), name="status-speakers")

    async def stop(self) -> None:
        """Stop following the speakers; end the status line."""
        if self._watch is not None:
            await cancel_and_wait([self._watch], 5.0)
        if self._terminal:
            self._out.write("\n")
            self._out.flush()

    async def __call__(self, event: BidiOutputEvent) -> None:
        """Follow one event of the agent."""
        line = transcript_line(event)
        if line is not None:
            self._print(line)
        if isinstance(event, BidiResponseStartEvent):
            self._answering = True
            self._set(THINKING)
        elif isinstance(event, BidiAudioDeltaEvent):
            self._set(SPEAKING)
        elif isinstance(event, BidiBargeInEvent):
            self._answering = False
            self._set(LISTENING)
        elif isinstance(event, BidiResponseStopEvent):
            self._answering = False
            if not self._playing():
                self._set(LISTENING)

    def _playing(self) -> bool:
        return self._speakers is not None and self._speakers.queued_s > 0

    async def _follow_speakers(self) -> None:
        while True:
            await asyncio.sleep(_LOOK_S)
            if self.state == SPEAKING and not self._answering and not self._playing():
                self._set(LISTENING)

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self._draw()

    def _draw(self) -> None:
        if self._terminal:
            self._out.write(f"\r\x1b[K{_MARKS[self.state]} {self.state}")
        else:
            self._out.write(f"status: {self.state}\n")
        self._out.flush()

    def _print(self, line: str) -> None:
        if self._terminal:
            self._out.write("\r\x1b[K")
            self._out.flush()
        self._show(line)
        if self._terminal:
            self._draw()
