"""The listening pipeline's settings (one frozen dataclass)."""

from __future__ import annotations

from dataclasses import dataclass

from strands_voice_protocol.errors import ConfigurationError

__all__ = ["ListenSettings"]


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
        end_silence_s: Silence after speech that ends the caller's turn.
        max_turn_s: A turn ends (``TurnTooLong``) after this much audio, even if the caller goes on.
        pre_roll_s: Audio kept from before the first speech frame and given to the recognizer (onsets).
        speculative: Start the final recognition during a pause (discarded if speech resumes), so the
            text is ready soon after ``end_silence_s``.
        speculate_after_s: The silence after which the speculative recognition starts (shorter pauses,
            between words, would only queue recognitions that are thrown away).
    """

    sample_rate: int = 16000
    frame_samples: int = 512
    vad_threshold: float = 0.5
    vad_hysteresis: float = 0.15
    min_speech_s: float = 0.2
    end_silence_s: float = 0.4
    max_turn_s: float = 30.0
    pre_roll_s: float = 0.5
    speculative: bool = True
    speculate_after_s: float = 0.15

    def __post_init__(self) -> None:
        if self.sample_rate != 16000:
            raise ConfigurationError(
                f"sample_rate must be 16000 (Silero VAD, Whisper), got {self.sample_rate}"
            )
        if self.frame_samples <= 0:
            raise ConfigurationError(f"frame_samples must be positive, got {self.frame_samples}")
        if not 0.0 < self.vad_threshold < 1.0:
            raise ConfigurationError(f"vad_threshold must be in (0, 1), got {self.vad_threshold}")
        for name in ("min_speech_s", "end_silence_s", "max_turn_s"):
            if getattr(self, name) <= 0:
                raise ConfigurationError(f"{name} must be positive, got {getattr(self, name)}")
        if self.pre_roll_s < 0 or self.vad_hysteresis < 0:
            raise ConfigurationError("pre_roll_s and vad_hysteresis must not be negative")

    def samples(self, seconds: float) -> int:
        """``seconds`` of audio as a sample count at :attr:`sample_rate`."""
        return round(seconds * self.sample_rate)
