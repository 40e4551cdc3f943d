"""What the listener knows at each pause of the labelled set: the words, Smart Turn's probability, the pitch.

For every pause of :mod:`strands_voice_tools.bench.eot_set` this runs what the listener runs when it
judges a pause (the speculative recognition of the turn's audio so far, Smart Turn on the same audio,
the end pitch), once. The decisions of every system are then computed from these records
(:mod:`strands_voice_tools.bench.eot_bench`): the same evidence, replayed under each rule and threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_voice.listen import final_fall
from strands_voice_tools.bench.eot_set import Turn, pauses

__all__ = ["Evidence", "TurnEvidence", "gather"]


@dataclass(frozen=True)
class Evidence:
    """One judged pause.

    Attributes:
        label: ``hold`` or ``end``.
        silence_s: How long the silence lasted.
        judged_at_s: The silence when the listener judges it.
        words: The recognizer's text of the turn up to the pause (None: its check did not trust it, and
            the listener judges without words).
        p_audio: Smart Turn's probability that the turn is complete.
        fall: The end pitch against the turn's register, semitones (None: too little voice).
        speech_after_s: For the end pause: how much of its silence was still speech (see
            :class:`~strands_voice_tools.bench.eot_set.Pause`).
    """

    label: str
    silence_s: float
    judged_at_s: float
    words: str | None
    p_audio: float
    fall: float | None
    speech_after_s: float = 0.0


@dataclass(frozen=True)
class TurnEvidence:
    """A turn of the set and its judged pauses (the last one labelled ``end``)."""

    name: str
    human: bool
    text: str
    pauses: tuple[Evidence, ...]
    final_words: str


def gather(turns: list[Turn], vad: Any, turn_model: Any, recognizer: Any) -> list[TurnEvidence]:
    """The evidence at every pause of ``turns`` (blocking: minutes on a laptop)."""
    out: list[TurnEvidence] = []
    for turn in turns:
        records = []
        for pause in pauses(turn, vad):
            pcm16 = (np.clip(pause.audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
            recognized = recognizer.recognize(pcm16)
            records.append(
                Evidence(
                    pause.label,
                    pause.silence_s,
                    pause.judged_at_s,
                    recognized.text if recognized.trusted else None,
                    float(turn_model.probability(pause.audio)),
                    final_fall(pause.audio),
                    pause.speech_after_s,
                )
            )
        if records:
            out.append(
                TurnEvidence(turn.name, turn.human, turn.text, tuple(records), records[-1].words or "")
            )
    return out
