"""What a speech recognizer is to the listening pipeline: one stream per caller turn.

The :class:`~strands_voice.listen.Listener` opens a :class:`RecognitionStream` when a turn starts
and feeds it the turn's audio as it comes (from a little before the first word). An engine that streams
(Amazon Transcribe) recognizes as it is fed and returns partial texts; an engine that works on whole
utterances (Whisper) buffers, and starts the final recognition speculatively when the caller pauses
(:meth:`RecognitionStream.pause`), dropping it if speech resumes, so the text is ready soon after the
end of the turn. At a pause the listener asks for the words so far (:meth:`RecognitionStream.words_so_far`)
to judge whether the turn is complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["RecognitionStream", "Recognized", "Recognizer"]


@dataclass(frozen=True)
class Recognized:
    """Recognized words: the text, how sure the engine is of it (0..1; None when it does not say), and
    whether the text may be answered (False: the recognizer's check found it invented, e.g. a repetition
    loop; the turn is asked again, never answered)."""

    text: str
    confidence: float | None = None
    trusted: bool = True


class RecognitionStream(Protocol):
    """The recognition of one caller turn (PCM16 mono at the listener's sample rate)."""

    async def feed(self, pcm16: bytes) -> list[str]:
        """Audio of the turn in; the partial texts the engine produced since the last call out."""

    async def pause(self) -> None:
        """The caller went silent (the turn may end): an engine may start its final recognition now."""

    async def resume(self) -> None:
        """Speech resumed after a pause: a speculative recognition started at the pause is stale."""

    async def words_so_far(self) -> Recognized | None:
        """The turn's words up to the pause, as soon as the engine can tell them (after :meth:`pause`;
        None: it cannot, or the speculation went stale)."""

    async def finish(self) -> Recognized:
        """The turn ended: the final words (the text may be empty)."""

    async def aclose(self) -> None:
        """Release the stream (idempotent; also after :meth:`finish`)."""


class Recognizer(Protocol):
    """A speech recognition engine."""

    async def open(self, prompt: str | None = None) -> RecognitionStream:
        """A stream for one new turn; ``prompt``, where the engine takes one, is the text it is likely to
        hear (the backchannels while the agent speaks)."""

    async def warm_up(self) -> None:
        """Load models / connect ahead of the first turn (optional work; may do nothing)."""
