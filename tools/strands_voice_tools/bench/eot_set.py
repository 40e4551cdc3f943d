"""The labelled end-of-turn set of ``bench --talk``: turns, their pauses, and which pause ends each turn.

Two sources, each turn a recording of one caller's turn at 16 kHz:

- the endpoint's voices (:mod:`strands_voice_tools.bench.turn_set`): the finished questions and the
  sentences paused for 0.8 s mid-way, and questions that end on the preposition they strand, finished
  or paused for 0.8 s after it (:data:`STRANDED`);
- real human recordings from Debian's ``asterisk-core-sounds-en-wav`` (Allison Smith's prompts, CC-BY-SA
  3.0, 8 kHz telephone audio read from the installed package, never copied here): statements, commands,
  short replies, multi-sentence prompts and its questions as recorded, and numbers dictated in groups made
  of its digit recordings (a digit every 0.1 s, the groups 0.8 s apart). Absent when the package is not
  installed (``apt-get install asterisk-core-sounds-en-wav``).

:func:`listen_through` runs the listener's VAD (Silero, frame by frame) and detector over a turn between
silences once, and keeps what a replay of the detector needs: every frame's speech probability, the pauses
the detector judges and where. A pause judged before the caller's last sound is a ``hold`` (the caller went
on), the pause after it the ``end``.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from strands_voice_protocol.audio.resample import resample_linear

from strands_voice.listen import JudgeTurn, ListenSettings, SpeechStarted, TurnDetector, TurnEnded
from strands_voice_tools.bench.turn_set import PAUSE_S, PAUSED, QUESTIONS, RATE, spoken

__all__ = [
    "ASTERISK_DIR",
    "DIGIT_GROUPS",
    "HUMAN_PROMPTS",
    "SPELLED_DIGITS",
    "STRANDED",
    "Heard",
    "Turn",
    "digits_heard",
    "endpoint_turns",
    "human_digits",
    "human_turns",
    "listen_through",
]

ASTERISK_DIR: Final = Path("/usr/share/asterisk/sounds/en")
#: Digits as a recognizer may spell them.
SPELLED_DIGITS: Final = {"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4"}
SPELLED_DIGITS.update(five="5", six="6", seven="7", eight="8", nine="9")
_TRANSCRIPTS: Final = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
#: Prompts said as a caller could say them: statements, commands, short replies, several sentences,
#: questions.
HUMAN_PROMPTS: Final = (
    "all-circuits-busy-now",
    "auth-incorrect",
    "cannot-complete-as-dialed",
    "check-number-dial-again",
    "conf-extended",
    "conf-getpin",
    "conf-onlyperson",
    "demo-thanks",
    "feature-not-avail-line",
    "goodbye",
    "hello-world",
    "im-sorry",
    "number-not-answering",
    "one-moment-please",
    "please-try-call-later",
    "pls-hold-while-try",
    "privacy-prompt",
    "privacy-thankyou",
    "queue-youarenext",
    "something-terribly-wrong",
    "sorry-youre-having-problems",
    "tt-weasels",
    "vm-intro",
    "vm-mailboxfull",
    "vm-msgsaved",
    "vm-nobodyavail",
    "vm-passchanged",
    "vm-rec-name",
    "vm-review",
    "vm-tooshort",
    "dir-intro",
    # the package's questions
    "vm-changeto",
    "vm-incorrect-mailbox",
    "vm-login",
    "vm-savefolder",
)
#: Questions that end on the preposition they strand, and the same words paused for 0.8 s before the
#: preposition's object (split at ``|``): the words at the pause read alike.
STRANDED: Final = (
    "Who should I send the form to?",
    "What is this charge for?",
    "Which plan can I switch to | without paying a fee?",
    "What do you know about | the family plan?",
)
#: Numbers dictated in groups (each group's digits 0.1 s apart, the groups :data:`PAUSE_S` apart).
DIGIT_GROUPS: Final = (("4", "1", "5"), ("5", "5", "5"), ("1", "2", "1", "2"))
_NUMBERS: Final = (
    DIGIT_GROUPS,
    (("8", "0", "0"), ("3", "2", "1"), ("7", "7", "4", "6")),
    (("2", "9"), ("0", "4")),
)
_DIGIT_GAP_S: Final = 0.1
#: Silence after a turn (the end pause must outlast every system's longest wait).
_TAIL_S: Final = 3.0


@dataclass(frozen=True)
class Turn:
    """One caller turn of the set.

    Attributes:
        name: Where it comes from (``voice:text`` or ``asterisk:prompt``).
        human: Said by a person (not synthesized).
        text: What was said (for the recognizer's checks).
        pcm16: The turn, 16 kHz mono PCM16, from its first sound to its last.
    """

    name: str
    human: bool
    text: str
    pcm16: bytes


@dataclass(frozen=True)
class Heard:
    """What the listener's detector meets in a turn (its VAD run once): enough to replay the detector.

    Attributes:
        probabilities: The VAD's speech probability of every frame, the turn with silence around it.
        judged: Each pause the detector judges (in order): its number and the sample it is judged at.
        start: The first sample of the turn's audio as the listener keeps it (its pre-roll included).
        speech_end_s: When the caller's last sound ends (s from the first frame).
        audio: The samples (float32, 16 kHz).
    """

    probabilities: tuple[float, ...]
    judged: tuple[tuple[int, int], ...]
    start: int
    speech_end_s: float
    audio: np.ndarray[Any, Any]

    def audio_until(self, sample: int) -> np.ndarray[Any, Any]:
        """The turn's audio up to ``sample`` (what the listener judges a pause on)."""
        return self.audio[self.start : sample].copy()

    @property
    def holds(self) -> int:
        """The pauses judged before the caller's last sound (the caller went on after them)."""
        return sum(at / RATE < self.speech_end_s for _, at in self.judged)


def _read_wav(path: Path) -> bytes:
    with wave.open(str(path)) as wav:
        rate, frames = wav.getframerate(), wav.readframes(wav.getnframes())
    return frames if rate == RATE else resample_linear(frames, rate, RATE)


def _transcripts() -> dict[str, str]:
    if not _TRANSCRIPTS.is_file():
        return {}
    lines = gzip.decompress(_TRANSCRIPTS.read_bytes()).decode("utf-8", "replace").splitlines()
    return {
        name.strip(): re.sub(r"\[.*?\]|\(.*?\)", "", text).strip()
        for name, _, text in (line.partition(":") for line in lines)
        if text
    }


def _trimmed(pcm16: bytes, floor: float = 0.01) -> bytes:
    """``pcm16`` from its first to its last sample above ``floor`` (the recordings' silent ends cut)."""
    samples = np.frombuffer(pcm16, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples) >= floor * 32768)
    return pcm16 if loud.size == 0 else samples[loud[0] : loud[-1] + 1].tobytes()


def human_digits(digits: str, gap_s: float) -> bytes:
    """``digits`` said one by one in the Asterisk voice, each trimmed to its sound, ``gap_s`` apart (16 kHz
    PCM16; the package must be installed)."""
    gap = bytes(2 * round(gap_s * RATE))
    return gap.join(_trimmed(_read_wav(ASTERISK_DIR / "digits" / f"{digit}.wav")) for digit in digits)


def digits_heard(text: str) -> str:
    """The digits of a transcript, spelled ones included ("Five, 5." -> "55"): what a recognizer heard of
    :func:`human_digits`."""
    words = re.findall(r"\w+", text.lower())
    return re.sub(r"\D", "", " ".join(SPELLED_DIGITS.get(word, word) for word in words))


def human_turns() -> list[Turn]:
    """The human recordings (none when the Debian package is not installed)."""
    if not ASTERISK_DIR.is_dir():
        return []
    texts = _transcripts()
    turns = [
        Turn(f"asterisk:{name}", True, texts.get(name, ""), _trimmed(_read_wav(ASTERISK_DIR / f"{name}.wav")))
        for name in HUMAN_PROMPTS
        if (ASTERISK_DIR / f"{name}.wav").is_file()
    ]
    pause = bytes(2 * round(PAUSE_S * RATE))
    for groups in _NUMBERS:
        said = [human_digits("".join(group), _DIGIT_GAP_S) for group in groups]
        text = ", ".join(" ".join(group) for group in groups)
        turns.append(Turn(f"asterisk:digits {text}", True, text, pause.join(said)))
    return turns


def endpoint_turns(engine: Any, voices: tuple[str, ...]) -> list[Turn]:
    """The finished questions, the paused sentences and :data:`STRANDED` in the endpoint's ``voices``."""
    return [
        Turn(f"{voice}:{text}", False, " ".join(text.replace("|", " ").split()), spoken(engine, text, voice))
        for voice in voices
        for text in (*QUESTIONS, *PAUSED, *STRANDED)
    ]


def listen_through(turn: Turn, vad: Any, settings: ListenSettings | None = None) -> Heard:
    """Run the VAD and the detector (no verdicts) over ``turn`` between silences (see :class:`Heard`)."""
    settings = dataclasses.replace(settings or ListenSettings(), incomplete_silence_s=_TAIL_S - 0.5)
    detector = TurnDetector(settings, judged_by_model=True)
    frame = settings.frame_samples
    lead = bytes(2 * round(settings.pre_roll_s * RATE))
    pcm = lead + turn.pcm16 + bytes(2 * round(_TAIL_S * RATE))
    audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
    vad.reset()
    probabilities: list[float] = []
    judged: list[tuple[int, int]] = []
    start = 0
    for index in range(audio.size // frame):
        probabilities.append(float(vad.probability(audio[index * frame : (index + 1) * frame])))
        events = detector.feed(probabilities[-1])
        for event in events:
            if isinstance(event, SpeechStarted):
                start = max(0, round(event.at_s * RATE) - settings.samples(settings.pre_roll_s))
            elif isinstance(event, JudgeTurn):
                judged.append((event.pause, (index + 1) * frame))
        if any(isinstance(event, TurnEnded) for event in events):
            break
    speech_end_s = (len(lead) + len(turn.pcm16)) / 2 / RATE
    return Heard(tuple(probabilities), tuple(judged), start, speech_end_s, audio)
