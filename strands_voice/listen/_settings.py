"""The listening pipeline's settings (one frozen dataclass)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.languages import answer_language

__all__ = ["EndOfTurnMode", "ListenSettings", "hearing_language_of"]

#: How a pause is judged: by the turn-end model (audio and words; the silence timer where the model is
#: not installed) or by the silence timer alone.
EndOfTurnMode = Literal["model", "silence"]


@dataclass(frozen=True)
class ListenSettings:
    """How the caller's turns are found in the incoming audio.

    Attributes:
        sample_rate: Rate of the incoming PCM16 mono audio (Silero VAD and Whisper run at 16 kHz).
        frame_samples: Samples per VAD frame (Silero: 512 at 16 kHz, 32 ms).
        vad_threshold: A frame whose speech probability reaches this is speech.
        vad_hysteresis: A frame below ``vad_threshold - vad_hysteresis`` is silence; between the two a
            frame keeps the current state (no flapping on a fading word).
        min_speech_s: Speech shorter than this does not start a turn (a cough, a click).
        end_of_turn: ``"model"``: at each pause the turn-end model judges the turn from its audio and its
            words (:mod:`strands_voice.listen._end_of_turn`): complete ends it at once, incomplete keeps
            listening up to ``incomplete_silence_s``; where the model is not installed, and with
            ``"silence"``, ``end_silence_s`` of silence ends a turn whatever was said.
        end_silence_s: The silence timer: silence after speech that ends the caller's turn.
        incomplete_silence_s: Silence that still ends a turn the model judged incomplete (the caller
            paused mid-sentence and did not go on).
        max_turn_s: A turn ends (``TurnTooLong``) after this much audio, even if the caller goes on.
        language: The caller's language: Kokoro's letter (``j``), an ISO 639-1 code (``ja``) or a BCP-47
            tag (``ja-JP``). It picks the turn words (what leaves a sentence open, the backchannels, what
            interrupts: :func:`~strands_voice.listen.turn_words`; a language without lists is judged by
            the sound alone) and the default recognizer's language.
            :class:`~strands_voice.cascade.VoiceCascade` without settings hears the language of its voice
            (:func:`hearing_language_of`).
        pre_roll_s: Audio kept from before the first speech frame and given to the recognizer (onsets).
        speculative: Start the final recognition during a pause (discarded if speech resumes), so the
            text is ready when the turn ends (and the turn-end model can read the words).
        speculate_after_s: The silence after which a pause is judged: the speculative recognition starts,
            then the turn-end model runs. Sooner, the last word is recognized without its quiet end:
            at 32 ms Whisper heard 「雨が降っていて、」 as 「アメガフード」, which looks finished, and a
            speculative answer was asked for, then dropped (at 64 ms it still may, with some CPUs'
            kernels and now and then between runs: Whisper's reading of a cut-off word is not stable).
    """

    sample_rate: int = 16000
    frame_samples: int = 512
    vad_threshold: float = 0.5
    vad_hysteresis: float = 0.15
    min_speech_s: float = 0.2
    end_of_turn: EndOfTurnMode = "model"
    end_silence_s: float = 0.4
    incomplete_silence_s: float = 2.0
    max_turn_s: float = 30.0
    language: str = "en"
    pre_roll_s: float = 0.5
    speculative: bool = True
    speculate_after_s: float = 0.064

    def __post_init__(self) -> None:
        if self.sample_rate != 16000:
            raise ConfigurationError(
                f"sample_rate must be 16000 (Silero VAD, Whisper), got {self.sample_rate}"
            )
        if self.frame_samples <= 0:
            raise ConfigurationError(f"frame_samples must be positive, got {self.frame_samples}")
        if not 0.0 < self.vad_threshold < 1.0:
            raise ConfigurationError(f"vad_threshold must be in (0, 1), got {self.vad_threshold}")
        if self.end_of_turn not in ("model", "silence"):
            raise ConfigurationError(f"end_of_turn must be 'model' or 'silence', got {self.end_of_turn!r}")
        for name in ("min_speech_s", "end_silence_s", "incomplete_silence_s", "max_turn_s"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"{name} must be positive, got {getattr(self, name)}")
        if not self.language.strip():
            raise ConfigurationError("language must name a language ('en', 'j', 'ja-JP', ...)")
        if self.pre_roll_s < 0 or self.vad_hysteresis < 0:
            raise ConfigurationError("pre_roll_s and vad_hysteresis must not be negative")

    def samples(self, seconds: float) -> int:
        """``seconds`` of audio as a sample count at :attr:`sample_rate`."""
        return round(seconds * self.sample_rate)


def hearing_language_of(lang: str | None, voice: str | None, listen_lang: str | None = None) -> str:
    """The caller's language of a call or a cascade: ``listen_lang`` when said, else the answers' language
    (``lang``, else the voice's letter, as the endpoint reads it: a Japanese voice without ``lang`` reads
    English; see :func:`strands_voice_protocol.languages.answer_language`)."""
    return listen_lang or answer_language(lang, voice)
