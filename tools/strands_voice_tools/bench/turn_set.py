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
from strands_voice_protocol.languages import unspaced

__all__ = [
    "BACKCHANNELS",
    "INTERRUPTIONS",
    "PAUSED",
    "PAUSE_S",
    "QUESTIONS",
    "TURN_TEXTS",
    "VOICES",
    "Kind",
    "Said",
    "TurnTexts",
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

# The Japanese set (``bench --talk --lang j``): the same kinds, said as Japanese callers say them on the
# phone: a pause after a clause ending in 「て」「けど」「ので」 or a particle, aizuchi over an answer.
QUESTIONS_JA: Final = (
    "プレミアムプランの料金はいくらですか？",
    "いつでも解約できますか？",
    "オフラインで使える端末は何台ですか？",
)
PAUSED_JA: Final = (
    "プレミアムプランについて、| 何が含まれているか教えてください。",
    "注文番号は、| 四二七です。",
    "支払いをしようとしたんですけど、| うまくいきませんでした。",
    "家族プランの料金を知りたいので、| 教えていただけますか？",
)
BACKCHANNELS_JA: Final = ("はい。", "なるほど。", "そうですね。", "うん。")
INTERRUPTIONS_JA: Final = ("ちょっと待ってください。料金はいくらですか？",)
VOICES_JA: Final = ("jf_alpha", "jf_nezumi", "jm_kumo")


@dataclass(frozen=True)
class TurnTexts:
    """One language's utterances of the set."""

    questions: tuple[str, ...]
    paused: tuple[str, ...]
    backchannels: tuple[str, ...]
    interruptions: tuple[str, ...]
    voices: tuple[str, ...]


#: The sets by Kokoro language letter.
TURN_TEXTS: Final[dict[str, TurnTexts]] = {
    "a": TurnTexts(QUESTIONS, PAUSED, BACKCHANNELS, INTERRUPTIONS, VOICES),
    "j": TurnTexts(QUESTIONS_JA, PAUSED_JA, BACKCHANNELS_JA, INTERRUPTIONS_JA, VOICES_JA),
}
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


def _joined(text: str) -> str:
    """The words of a paused sentence without its ``|`` (no space where the script has none)."""
    first, _, rest = text.partition("|")
    if not rest:
        return " ".join(text.split())
    return _joined(f"{first.strip()}{'' if unspaced(first.strip()[-1:]) else ' '}{rest.strip()}")


def spoken(engine: Any, text: str, voice: str, pause_s: float = PAUSE_S) -> bytes:
    """``text`` said by ``voice`` at 16 kHz, each ``|``-separated part trimmed to its audible sound and
    the parts joined by ``pause_s`` of silence."""
    from strands_voice_tools.bench.talk import audible_16k

    parts = [audible_16k(engine, part.strip(), voice) for part in text.split("|")]
    return (bytes(2 * round(pause_s * RATE))).join(parts)


def spoken_set(engine: Any, voice: str, seed: int = 0, lang: str = "a") -> dict[Kind, list[Said]]:
    """Every utterance of ``lang``'s set in ``voice`` (the noise bursts seeded from ``seed``), by kind."""
    texts = TURN_TEXTS[lang]

    def say(kind: Kind, texts: tuple[str, ...]) -> list[Said]:
        return [Said(kind, _joined(text), voice, spoken(engine, text, voice)) for text in texts]

    return {
        "question": say("question", texts.questions),
        "paused": say("paused", texts.paused),
        "backchannel": say("backchannel", texts.backchannels),
        "noise": [Said("noise", "", "", noise_burst(seed + index)) for index in range(3)],
        "interruption": say("interruption", texts.interruptions),
    }
