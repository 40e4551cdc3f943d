"""The spoken set of ``bench --talk``'s turn-taking calls: what the caller says, in the endpoint's voices.

Five kinds of utterance, each the endpoint's own speech at 16 kHz trimmed to its audible part (so its
first and last sound are known):

- ``question``: a finished question, said while nothing is playing (voice-to-voice, end-of-turn delay);
- ``paused``: a sentence with a 0.8 s pause in the middle, where a silence timer ends the turn too early
  ("I would like to know, [0.8 s] what the Premium plan includes.");
- ``backchannel`` ("Uh-huh.", "Mm-hmm.", "Right.") and ``noise`` (a 0.3 s burst), said over an answer:
  a person goes on talking;
- ``interruption`` ("Stop please. What does it cost?") said over an answer: a person stops and answers.

Voices: the offline packs are Japanese voices speaking English; ``jm_kumo``, ``jf_alpha`` and ``jf_nezumi``
read these sentences so that faster-whisper base gets every word of the questions right (the other two,
``jf_gongitsune`` and ``jf_tebukuro``, turn "plan includes" into "planning includes"). "Mm-hmm." is hard
for all of them (Whisper hears "MAMO" or "Mom"), as it is for a recognizer with a real caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np

__all__ = [
    "BACKCHANNELS",
    "INTERRUPTIONS",
    "PAUSED",
    "PAUSE_S",
    "QUESTIONS",
    "VOICES",
    "Kind",
    "Said",
    "noise_burst",
    "spoken",
    "spoken_set",
]

Kind = Literal["question", "paused", "backchannel", "noise", "interruption"]

QUESTIONS: Final = (
    "What does the premium plan cost?",
    "Can I cancel my plan at any time?",
    "How many devices can I use offline?",
)
#: Sentences whose two parts (split at ``|``) are said with :data:`PAUSE_S` of silence between them.
PAUSED: Final = (
    "I would like to know, | what the Premium plan includes.",
    "My order number is | four two seven.",
    "So the thing is, | my payment did not go through.",
    "Could you tell me | how much the family plan costs?",
)
BACKCHANNELS: Final = ("Uh-huh.", "Mm-hmm.", "Right.")
INTERRUPTIONS: Final = ("Stop please. What does it cost?",)
#: The caller's voices, one per trial in turn.
VOICES: Final = ("jm_kumo", "jf_alpha", "jf_nezumi")
#: The pause in the middle of a ``paused`` sentence.
PAUSE_S: Final = 0.8
#: A noise burst's length and loudness (RMS, dB relative to full scale).
NOISE_S: Final = 0.3
NOISE_DBFS: Final = -24.0
RATE: Final = 16000


@dataclass(frozen=True)
class Said:
    """One utterance of the set.

    Attributes:
        kind: What it is (see the module docstring).
        text: The words ("" for a noise).
        voice: The voice that says it ("" for a noise).
        pcm16: The audio, 16 kHz mono PCM16, from its first audible sound to its last.
    """

    kind: Kind
    text: str
    voice: str
    pcm16: bytes

    @property
    def seconds(self) -> float:
        """How long it lasts."""
        return len(self.pcm16) / (2 * RATE)


def noise_burst(seed: int, seconds: float = NOISE_S, dbfs: float = NOISE_DBFS) -> bytes:
    """A burst of low-passed noise (a rustle, a bump on the microphone), 10 ms fades, 16 kHz PCM16."""
    rng = np.random.default_rng(seed)
    samples = round(seconds * RATE)
    noise = np.convolve(rng.normal(size=samples + 7), np.ones(8) / 8, mode="valid")[:samples]
    noise *= 10 ** (dbfs / 20) / max(float(np.sqrt(np.mean(noise**2))), 1e-9)
    fade = np.minimum(1.0, np.minimum(np.arange(samples), np.arange(samples)[::-1]) / (0.01 * RATE))
    return (np.clip(noise * fade, -1.0, 1.0) * 32767).astype("<i2").tobytes()


def spoken(engine: Any, text: str, voice: str, pause_s: float = PAUSE_S) -> bytes:
    """``text`` said by ``voice`` at 16 kHz, each ``|``-separated part trimmed to its audible sound and
    the parts joined by ``pause_s`` of silence."""
    from strands_voice_tools.bench.talk import audible_16k

    parts = [audible_16k(engine, part.strip(), voice) for part in text.split("|")]
    return (bytes(2 * round(pause_s * RATE))).join(parts)


def spoken_set(engine: Any, voice: str, seed: int = 0) -> dict[Kind, list[Said]]:
    """Every utterance of the set in ``voice`` (the noise bursts seeded from ``seed``), by kind."""

    def say(kind: Kind, texts: tuple[str, ...]) -> list[Said]:
        return [
            Said(kind, " ".join(text.replace("|", " ").split()), voice, spoken(engine, text, voice))
            for text in texts
        ]

    return {
        "question": say("question", QUESTIONS),
        "paused": say("paused", PAUSED),
        "backchannel": say("backchannel", BACKCHANNELS),
        "noise": [Said("noise", "", "", noise_burst(seed + index)) for index in range(3)],
        "interruption": say("interruption", INTERRUPTIONS),
    }
