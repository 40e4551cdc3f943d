"""How the turn-taking core decides (one frozen dataclass)."""

from __future__ import annotations

from dataclasses import dataclass

from strands_voice_protocol.errors import ConfigurationError

__all__ = ["TurnSettings"]


@dataclass(frozen=True)
class TurnSettings:
    """The turn-taking core's thresholds.

    Attributes:
        overlap_speech_s: Speech over an answer that lasts this long without a pause is a barge-in (no
            backchannel is that long), before its words are known. A language whose backchannels run
            longer waits for its own (``longest_backchannel_s`` in ``turn_words.json``: Japanese 1.3 s).
        resume_after_silence_s: A held answer goes on once the caller has been silent this long without
            real words (a cough, a breath, an "mm" the recognizer made nothing of).
        decide_within_s: A held answer is decided at the latest this long after the caller's first sound:
            a barge-in if they are still speaking, else it goes on.
        min_confidence: A short utterance (fewer than ``sentence_words`` words) over an answer that is
            neither a backchannel nor an interruption word barges in only when the recognizer is this
            sure of it (a mumbled "uh-huh" comes out as odd words of low confidence).
        sentence_words: Utterances of this many words or more are real words whatever they say.
        max_prompt_chars: The longest prompt, turns joined together included.
        language: The caller's language (the backchannel and interruption lists).
        speculate: Ask for the answer at a pause whose words look finished, before the turn is judged
            over: it is held (nothing heard, nothing remembered) until the turn ends with those words,
            and dropped in silence if the caller goes on. Off: an answer starts when the turn ends.
    """

    overlap_speech_s: float = 0.8
    resume_after_silence_s: float = 0.6
    decide_within_s: float = 1.5
    min_confidence: float = 0.7
    sentence_words: int = 3
    max_prompt_chars: int = 8000
    language: str = "en"
    speculate: bool = True

    def __post_init__(self) -> None:
        for name in ("overlap_speech_s", "resume_after_silence_s", "decide_within_s"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"{name} must be positive, got {getattr(self, name)}")
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ConfigurationError(f"min_confidence must be in [0, 1], got {self.min_confidence}")
        if self.sentence_words < 1 or self.max_prompt_chars < 1:
            raise ConfigurationError("sentence_words and max_prompt_chars must be positive")
