"""Silence policy: trim each segment's own silence, then pause on purpose where the text pauses.

Kokoro pads every segment it speaks with about 330 ms of silence before the first sound and 360-550 ms
after the last one. Between two sentences a listener would hear about 900 ms of nothing, and the first
sound of an answer would come a third of a second after its first byte. :class:`SegmentShaper` cuts that
silence while the audio streams (energy-based, 5 ms analysis windows), keeps a few milliseconds on each
side of the speech with a short fade (so the cut never clicks), and then adds a deliberate pause chosen by
how the segment's text ends:

- after a sentence (``. ! ? …``): ``sentence_pause_ms``, 300 ms by default. People pause about 250-500 ms
  between sentences when reading aloud; 300 ms sounds unhurried without sounding slow.
- after a clause (``, ; : —``): ``clause_pause_ms``, 150 ms by default: a breath, not a stop.
- after a word (a chunk cut mid-sentence): ``word_pause_ms``, 0 ms: the kept edges (10 ms before, 40 ms
  after) already leave a gap like the one between two words.

Speech samples are never changed: only samples below the threshold are dropped, and the fades lie inside
the kept quiet edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final

import numpy as np
import numpy.typing as npt
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.punctuation import CJK_CLAUSE_END, CLAUSE_END, SENTENCE_END

__all__ = ["SESSION_PARAMETERS", "SegmentShaper", "SilencePolicy", "pause_after", "session_policy"]

# A pause follows how the text ends: at the end of a segment, Latin marks need no whitespace after them.
_CLAUSE_END: Final = CLAUSE_END + CJK_CLAUSE_END
_CLOSERS: Final = "\"'”’)]»」』）"
#: The longest kept edge, fade or pause (ms).
_MAX_MS: Final = 5000


@dataclass(frozen=True)
class SilencePolicy:
    """How the endpoint shapes the silence around each segment.

    Attributes:
        trim: Trim each segment's leading and trailing silence and insert the pauses below; False sends
            the engine's audio as it is.
        threshold_dbfs: A 5 ms window quieter than this (RMS) is silence. Kokoro's padding is far below it
            and its softest speech sounds (the start of an ``h`` or ``f``) above it.
        lead_ms: Silence kept before the first sound of a segment.
        tail_ms: Silence kept after the last sound (a release that fades out is kept whole).
        fade_ms: Fade-in at the start and fade-out at the end of what is kept (within the kept silence).
        sentence_pause_ms: Pause inserted after a segment whose text ends a sentence.
        clause_pause_ms: Pause inserted after a segment whose text ends a clause.
        word_pause_ms: Pause inserted after a segment whose text ends without punctuation.
    """

    trim: bool = True
    threshold_dbfs: float = -50.0
    lead_ms: float = 10.0
    tail_ms: float = 40.0
    fade_ms: float = 4.0
    sentence_pause_ms: float = 300.0
    clause_pause_ms: float = 150.0
    word_pause_ms: float = 0.0

    def __post_init__(self) -> None:
        for name in (field.name for field in fields(self) if field.name.endswith("_ms")):
            if not 0 <= getattr(self, name) <= _MAX_MS:
                raise ConfigurationError(f"{name} must be between 0 and {_MAX_MS}")
        if self.fade_ms > min(self.lead_ms, self.tail_ms):
            raise ConfigurationError("fade_ms must fit inside lead_ms and tail_ms")
        if not -120 <= self.threshold_dbfs < 0:
            raise ConfigurationError("threshold_dbfs must be between -120 and 0")


def pause_after(text: str, policy: SilencePolicy) -> float:
    """The pause (ms) that follows a segment speaking ``text``, by how the text ends."""
    end = text.rstrip().rstrip(_CLOSERS)
    if not end:
        return policy.word_pause_ms
    if end[-1] in SENTENCE_END:
        return policy.sentence_pause_ms
    if end[-1] in _CLAUSE_END:
        return policy.clause_pause_ms
    return policy.word_pause_ms


_WINDOW_S: Final = 0.005


class SegmentShaper:
    """Trims one stream of segments as their audio arrives, piece by piece.

    Feed each segment's audio with :meth:`feed` (in as many pieces as it comes), then call
    :meth:`end_segment`. Audio is held back only while it may still turn out to be silence to trim.

    Args:
        policy: The silence policy (``trim`` must be True).
        sample_rate: Samples per second.
    """

    def __init__(self, policy: SilencePolicy, sample_rate: int) -> None:
        self._policy = policy
        self._rate = sample_rate
        self._window = max(1, round(sample_rate * _WINDOW_S))
        self._threshold = 10.0 ** (policy.threshold_dbfs / 10.0)
        self._lead = round(sample_rate * policy.lead_ms / 1000)
        self._tail = round(sample_rate * policy.tail_ms / 1000)
        self._fade = round(sample_rate * policy.fade_ms / 1000)
        self._held: npt.NDArray[np.float32]
        self._sounding: bool
        self._cut: bool
        self._dropped: int
        self._lead_dropped: int
        self._reset()

    @property
    def sounding(self) -> bool:
        """Whether the current segment's first sound has been found (and sent)."""
        return self._sounding

    @property
    def lead_dropped(self) -> int:
        """Samples cut from the current segment's start before its first kept sample.

        Final once :attr:`sounding` is True (until :meth:`end_segment`); a time measured from the
        segment's first sample, minus this, is measured from the first sample :meth:`feed` returned.
        """
        return self._lead_dropped

    def _loud_windows(self, samples: npt.NDArray[np.float32]) -> npt.NDArray[np.intp]:
        whole = len(samples) // self._window
        frames = np.asarray(samples[: whole * self._window], dtype=np.float64).reshape(whole, self._window)
        return np.flatnonzero(np.mean(frames * frames, axis=1) > self._threshold)

    def feed(self, audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Take the next piece of the current segment; return what can be sent now (may be empty)."""
        held = np.concatenate([self._held, np.asarray(audio, dtype=np.float32)])
        loud = self._loud_windows(held)
        if not loud.size:
            if not self._sounding:
                # All silence so far: only the last lead_ms can still be needed (drop whole windows only).
                whole = len(held) // self._window
                keep = -(-self._lead // self._window)
                drop = max(0, whole - keep) * self._window
                self._cut = self._cut or drop > 0
                self._dropped += drop
                held = held[drop:]
            self._held = held
            return np.zeros(0, dtype=np.float32)
        out_start = 0
        starts = not self._sounding
        if starts:
            self._sounding = True
            onset = int(loud[0]) * self._window
            out_start = max(0, onset - self._lead)
            self._lead_dropped = self._dropped + out_start
        speech_end = (int(loud[-1]) + 1) * self._window
        out = held[out_start:speech_end].copy()
        if starts and (out_start > 0 or self._cut):
            self._fade_in(out)
        self._held = held[speech_end:]
        return out

    def _fade_in(self, out: npt.NDArray[np.float32]) -> None:
        count = min(self._fade, len(out))
        if count:
            out[:count] *= np.linspace(0.0, 1.0, count + 1, dtype=np.float32)[1:]

    def end_segment(self, pause_ms: float) -> npt.NDArray[np.float32]:
        """Close the current segment: its kept tail (faded out) and the pause that follows it."""
        pause = np.zeros(round(self._rate * pause_ms / 1000), dtype=np.float32)
        if not self._sounding:
            # No sound at all (e.g. text of only punctuation): nothing but the pause.
            self._reset()
            return pause
        tail = self._held[: self._tail].copy()
        cut = len(self._held) > len(tail)
        if cut:
            count = min(self._fade, len(tail))
            if count:
                tail[-count:] *= np.linspace(1.0, 0.0, count + 1, dtype=np.float32)[:-1]
        self._reset()
        return np.concatenate([tail, pause])

    def _reset(self) -> None:
        self._held = np.zeros(0, dtype=np.float32)  # audio that may still turn out to be silence
        self._sounding = False  # this segment's first sound has been found
        self._cut = False  # some of this segment's leading silence was dropped
        self._dropped = 0  # samples of this segment's leading silence dropped so far
        self._lead_dropped = 0  # ... and before its first kept sample, once it sounds


#: Query parameters a WebSocket session may set: each sets the policy field of its name.
SESSION_PARAMETERS: Final = ("trim", "sentence_pause_ms", "clause_pause_ms", "word_pause_ms")


def session_policy(base: SilencePolicy, params: Mapping[str, str]) -> SilencePolicy:
    """The policy for one session: ``base`` with the session's query parameters applied.

    ``trim`` takes ``0``/``1``/``false``/``true``; the pauses take milliseconds (0-5000).

    Raises:
        ValueError: a parameter's value is not valid (the message names it).
    """
    changes: dict[str, bool | float] = {}
    for name in SESSION_PARAMETERS:
        raw = params.get(name)
        if raw is None:
            continue
        if name == "trim":
            lowered = raw.strip().lower()
            if lowered not in ("0", "1", "true", "false"):
                raise ValueError(f"'{name}' must be 0, 1, true or false")
            changes[name] = lowered in ("1", "true")
            continue
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"'{name}' must be a number of milliseconds") from None
        if not 0 <= value <= _MAX_MS:
            raise ValueError(f"'{name}' must be between 0 and {_MAX_MS}")
        changes[name] = value
    return replace(base, **changes) if changes else base  # type: ignore[arg-type]
