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
from strands_voice_tools.bench.eot_set import Turn, listen_through
from strands_voice_tools.bench.turn_set import RATE

__all__ = ["Evidence", "TurnEvidence", "gather"]


@dataclass(frozen=True)
class Evidence:
    """What the listener knows when it judges one pause.

    Attributes:
        words: The recognizer's text of the turn up to the pause (None: its check did not trust it, and
            the listener judges without words).
        p_audio: Smart Turn's probability that the turn is complete.
        fall: The end pitch against the turn's register, semitones (None: too little voice).
    """

    words: str | None
    p_audio: float
    fall: float | None


@dataclass(frozen=True)
class TurnEvidence:
    """A turn of the set: the detector's input (its VAD probabilities) and the evidence at each pause it
    judges (by pause number).

    Attributes:
        name: Where it comes from.
        human: Said by a person.
        text: What was said.
        probabilities: The VAD's speech probability of every frame.
        pauses: The evidence at each pause the detector judged, by the pause's number (a pause too short to
            be judged has a number too).
        speech_end_s: When the caller's last sound ends.
        holds: The pauses judged before it (the caller went on).
        final_words: The recognizer's (checked) text of the whole turn.
    """

    name: str
    human: bool
    text: str
    probabilities: tuple[float, ...]
    pauses: dict[int, Evidence]
    speech_end_s: float
    holds: int
    final_words: str


def _recognized(recognizer: Any, audio: np.ndarray[Any, Any]) -> str | None:
    pcm16 = (np.clip(audio, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    recognized = recognizer.recognize(pcm16)
    return recognized.text if recognized.trusted else None


def gather(turns: list[Turn], vad: Any, turn_model: Any, recognizer: Any) -> list[TurnEvidence]:
    """The evidence at every pause of ``turns`` (blocking: minutes on a laptop)."""
    out: list[TurnEvidence] = []
    for turn in turns:
        heard = listen_through(turn, vad)
        pauses = {}
        for number, at in heard.judged:
            audio = heard.audio_until(at)
            words = _recognized(recognizer, audio)
            pauses[number] = Evidence(words, float(turn_model.probability(audio)), final_fall(audio))
        whole = heard.audio_until(round(heard.speech_end_s * RATE) + RATE // 2)
        final = _recognized(recognizer, whole) or ""
        evidence = TurnEvidence(
            turn.name,
            turn.human,
            turn.text,
            heard.probabilities,
            pauses,
            heard.speech_end_s,
            heard.holds,
            final,
        )
        out.append(evidence)
    return out
