"""What the phone plays of a call's answers, as a sans-I/O state machine (no I/O, no clock).

The call writes what it writes to any caller (the answer's audio as bytes in the call's ``mulaw`` format,
every other event as Leg 3 JSON); :class:`PhonePlayback` turns that into what a phone line takes: audio cut
into ``media`` frames of :data:`FRAME_BYTES` (20 ms, as Twilio sends), a ``mark`` after each sentence's
audio, ``clear`` when the answer is paused or interrupted. The frames themselves are the carrier codec's
(:mod:`strands_voice_protocol.telephony.twilio` here), passed in as :class:`PhoneWire`.

- ``speech_paused``: ``clear`` (the phone stops at once and drops what it has not played), and the audio
  from the pause's ``heard_ms`` on is kept back; ``speech_resumed`` sends it again from there, its marks
  with it: nothing repeated, nothing skipped (as a ``/ws`` player that keeps its buffer).
- ``interrupted``: ``clear``; the answer's audio is forgotten.
- Marks are named ``<answer>.<sentence>.<generation>``; a ``clear`` starts a new generation, so the marks
  Twilio returns for cleared audio are told from the ones it returns for played audio.
  :attr:`PhonePlayback.confirmed` is, per answer, the sentences the phone confirmed it played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Protocol

__all__ = ["FRAME_BYTES", "PhonePlayback", "PhoneWire"]

#: One media frame out: 20 ms of μ-law at 8 kHz.
FRAME_BYTES: Final = 160
#: μ-law bytes per millisecond (8 kHz, one byte a sample).
_BYTES_PER_MS: Final = 8


class PhoneWire(Protocol):
    """A carrier's frames out (a codec's writers, bound to the stream)."""

    def media(self, payload: bytes) -> str:
        """Audio for the phone to play after what it has."""

    def mark(self, name: str) -> str:
        """A mark the carrier returns once the audio before it was played."""

    def clear(self) -> str:
        """The phone drops what it has not played."""


@dataclass
class _PhoneAnswer:
    """The answer being played: its audio (offsets in μ-law bytes) and its sentence marks."""

    request_id: str
    audio: bytearray = field(default_factory=bytearray)
    marks: list[tuple[int, int]] = field(default_factory=list)  # (offset, sentence)
    sent: int = 0  # audio bytes the phone has or played (back to the pause's position on a pause)
    marks_sent: int = 0  # marks the phone has or returned


class PhonePlayback:
    """One phone call's playback (see the module docstring).

    Args:
        wire: The carrier's frames out.
    """

    def __init__(self, wire: PhoneWire) -> None:
        self.wire = wire
        self.answer: _PhoneAnswer | None = None
        self.paused = False
        self.generation = 0
        #: Per answer (its ``request_id``), the sentences the phone confirmed it played, in order.
        self.confirmed: dict[str, list[int]] = {}
        self._pending: dict[str, tuple[str, int]] = {}  # mark name -> (answer, sentence), not yet back

    def audio(self, data: bytes) -> list[str]:
        """More of the answer's audio (μ-law); the frames to send now."""
        if self.answer is None:
            self.answer = _PhoneAnswer("")
        self.answer.audio.extend(data)
        return [] if self.paused else self._send_through(len(self.answer.audio))

    def event(self, event: dict[str, Any]) -> list[str]:
        """One of the call's events (Leg 3 JSON decoded); the frames to send now."""
        kind = event.get("type")
        if kind == "agent_start":
            self.answer, self.paused = _PhoneAnswer(str(event.get("request_id", ""))), False
            self.confirmed.setdefault(self.answer.request_id, [])
        elif kind == "sentence_complete" and self.answer is not None:
            self.answer.marks.append((len(self.answer.audio), int(event.get("sentence", 0))))
            if not self.paused:
                return self._send_through(len(self.answer.audio))
        elif kind == "speech_paused" and self.answer is not None and not self.paused:
            self.paused = True
            heard = round(float(event.get("heard_ms") or 0.0) * _BYTES_PER_MS)
            self.answer.sent = min(heard, self.answer.sent)  # the phone drops the rest: sent again later
            self.answer.marks_sent = sum(1 for offset, _ in self.answer.marks if offset < self.answer.sent)
            return self._clear()
        elif kind == "speech_resumed" and self.answer is not None and self.paused:
            self.paused = False
            return self._send_through(len(self.answer.audio))
        elif kind == "interrupted":
            self.answer, self.paused = None, False
            return self._clear()
        return []

    def played(self, name: str) -> tuple[str, int] | None:
        """The carrier returned the mark ``name``: the answer and sentence it confirms as played (None: a
        cleared mark's echo, or no mark of ours)."""
        found = self._pending.pop(name, None)
        if found is not None:
            answer, sentence = found
            sentences = self.confirmed.setdefault(answer, [])
            if sentence not in sentences:
                sentences.append(sentence)
        return found

    def _clear(self) -> list[str]:
        self.generation += 1
        self._pending.clear()  # marks still out were cleared: their echoes confirm nothing
        return [self.wire.clear()]

    def _send_through(self, end: int) -> list[str]:
        """Media (and the marks among it) from what was sent up to ``end``."""
        answer = self.answer
        assert answer is not None
        frames: list[str] = []
        while answer.marks_sent < len(answer.marks) and answer.marks[answer.marks_sent][0] <= end:
            offset, sentence = answer.marks[answer.marks_sent]
            frames.extend(self._media(bytes(answer.audio[answer.sent : offset])))
            answer.sent = max(answer.sent, offset)
            name = f"{answer.request_id}.{sentence}.{self.generation}"
            self._pending[name] = (answer.request_id, sentence)
            frames.append(self.wire.mark(name))
            answer.marks_sent += 1
        frames.extend(self._media(bytes(answer.audio[answer.sent : end])))
        answer.sent = max(answer.sent, end)
        return frames

    def _media(self, audio: bytes) -> list[str]:
        return [self.wire.media(audio[i : i + FRAME_BYTES]) for i in range(0, len(audio), FRAME_BYTES)]
