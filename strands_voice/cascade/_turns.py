"""The cascade's turn adapter: the listener's events and the answers' progress through the one turn-taking
core (:class:`~strands_voice.turns.TurnTaking`), its actions performed on the cascade.

Every input reaches the core through the library's one asyncio adapter of it,
:class:`~strands_voice.turns.TurnLoop` (one task, the loop's clock, the core woken when it asks). The
adapter holds no turn rule: it turns each action into the cascade's calls and ``strands.bidi`` events.

- ``StartAnswer`` / ``ReleaseAnswer`` / ``PauseAnswer`` / ``ResumeAnswer`` / ``InterruptAnswer`` /
  ``DropAnswer``: the host's answers (an interrupt is a ``BidiBargeInEvent`` too: ``BidiAgent``'s player
  drops its buffer; a held answer, a speculation, emits nothing until released, and a drop of it nothing
  at all);
- ``ShowTranscript``: a final that is a turn becomes a user transcript (``role="user"``, in
  ``BidiAgent``'s history); a backchannel said over an answer does not enter the history;
- ``ReportError``: logged (``BidiAgent`` has no event for it).

The host's marks get the turn's end and its final transcript (``time.perf_counter()``: the bench splits
its latency with them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Final, Protocol

from strands.bidi.types.events import (
    BidiBargeInEvent,
    BidiOutputEvent,
    BidiTranscriptDeltaEvent,
    BidiTranscriptStartEvent,
    BidiTranscriptStopEvent,
)
from strands_voice_protocol.aio.tasks import cancel_and_wait

from strands_voice.listen import (
    DEFAULT,
    DefaultTurnModel,
    Listener,
    ListenSettings,
    Recognizer,
    Transcript,
    TurnEnded,
    TurnModel,
    Vad,
)
from strands_voice.turns import (
    AnswerEnded,
    AnswerSpeaking,
    DropAnswer,
    InterruptAnswer,
    PauseAnswer,
    ReleaseAnswer,
    ReportError,
    ResumeAnswer,
    ShowTranscript,
    StartAnswer,
    StopPressed,
    TurnAction,
    TurnInput,
    TurnLoop,
    TurnSettings,
    TurnTaking,
    Typed,
)

__all__ = ["CascadeTurns", "Host"]

logger = logging.getLogger(__name__)

_CLOSE_GRACE_S: Final = 5.0


class Host(Protocol):
    """What the turn adapter needs from the cascade.

    Attributes:
        recognizer: The speech recognizer.
        marks: The latest answer's milestones (``turn_end``, ``transcript``: ``time.perf_counter()``).
    """

    recognizer: Recognizer
    marks: dict[str, float]

    def emit(self, event: BidiOutputEvent, /) -> None:
        """Queue an event for ``receive()``."""

    def start_answer(self, answer_id: str, prompt: str, *, held: bool = False) -> None:
        """Answer ``prompt`` as ``answer_id`` (an earlier answer still stopping may linger); ``held``: emit
        nothing of it until :meth:`release_answer`."""

    def release_answer(self, answer_id: str) -> None:
        """The held answer ``answer_id`` goes out."""

    def hold_answer(self, answer_id: str, hold: bool) -> None:
        """Pause (``hold``) or resume the answer ``answer_id``."""

    def stop_answer(self, answer_id: str, *, heard: bool) -> None:
        """Barge in on the answer (``heard``: keep what was heard) or drop it (nothing was heard)."""


class CascadeTurns:
    """The cascade's ears and turn-taking (see the module docstring).

    Args:
        host: The cascade.
        settings: The listener's settings.
        vad: The VAD (None: Silero).
        turn_model: The turn-end model (default: Smart Turn where installed; None: the silence timer).
        turn_settings: The turn-taking core's thresholds.
    """

    def __init__(
        self,
        host: Host,
        settings: ListenSettings,
        vad: Vad | None,
        turn_model: TurnModel | DefaultTurnModel | None = DEFAULT,
        turn_settings: TurnSettings | None = None,
    ) -> None:
        self._host = host
        self.listener = Listener(settings, vad=vad, recognizer=host.recognizer, turn_model=turn_model)
        core = TurnTaking(turn_settings or TurnSettings(language=settings.language))
        self.loop = TurnLoop(core, self._perform, self._mark)
        self._pump: asyncio.Task[None] | None = None
        self._heard: set[str] = set()  # the answers whose audio went out and that have not ended

    async def feed(self, pcm16: bytes) -> None:
        """Caller audio in (16 kHz PCM16)."""
        await self.listener.feed(pcm16)

    def typed(self, text: str) -> None:
        """A typed turn."""
        self.loop.put(Typed(text))

    def stop_pressed(self) -> None:
        """Barge in without speaking."""
        self.loop.put(StopPressed())

    def answer_speaking(self, answer_id: str) -> None:
        """The answer's first audio went out: the listener hears the caller as someone speaking over it."""
        self._heard.add(answer_id)
        self.listener.agent_speaking = True
        self.loop.put(AnswerSpeaking(answer_id))

    def answer_ended(self, answer_id: str) -> None:
        """The answer ended, however it ended."""
        self._heard.discard(answer_id)
        self.listener.agent_speaking = bool(self._heard)
        self.loop.put(AnswerEnded(answer_id))

    @property
    def core(self) -> TurnTaking:
        """The turn-taking rules this adapter drives."""
        return self.loop.core

    async def aclose(self) -> None:
        """Stop listening (an open turn is dropped); :meth:`run` ends."""
        await self.listener.aclose()
        self.loop.close()
        if self._pump is not None:
            await cancel_and_wait([self._pump], _CLOSE_GRACE_S)

    async def run(self) -> None:
        """Feed every input to the core and perform its actions, until closed."""
        self._pump = asyncio.create_task(self._listen(), name="cascade-listener")
        await self.loop.run()

    async def _listen(self) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            async for event in self.listener.events():
                self.loop.put(event)
        self.loop.close()

    def _mark(self, event: TurnInput) -> None:
        if isinstance(event, TurnEnded):
            self._host.marks["turn_end"] = time.perf_counter()
        elif isinstance(event, Transcript) and event.final:
            self._host.marks["transcript"] = time.perf_counter()

    async def _perform(self, action: TurnAction) -> None:
        host = self._host
        if isinstance(action, StartAnswer):
            host.start_answer(action.answer_id, action.prompt, held=action.held)
        elif isinstance(action, ReleaseAnswer):
            host.release_answer(action.answer_id)
        elif isinstance(action, PauseAnswer | ResumeAnswer):
            host.hold_answer(action.answer_id, isinstance(action, PauseAnswer))
        elif isinstance(action, InterruptAnswer):
            host.emit(BidiBargeInEvent())
            host.stop_answer(action.answer_id, heard=True)
        elif isinstance(action, DropAnswer):
            host.stop_answer(action.answer_id, heard=False)
        elif isinstance(action, ShowTranscript) and action.final:
            self._show(action)
        elif isinstance(action, ReportError):
            logger.warning("code=<%s> | %s", action.code, action.message)

    def _show(self, transcript: ShowTranscript) -> None:
        """A final that counts as a turn: one user transcript (start, the words, stop)."""
        text = transcript.text.strip()
        if not text or not transcript.counts:
            return
        content_id = f"user-{uuid.uuid4().hex[:12]}"
        self._host.emit(BidiTranscriptStartEvent("user", content_id))
        self._host.emit(BidiTranscriptDeltaEvent(text, "user", content_id))
        self._host.emit(BidiTranscriptStopEvent("user", content_id))
