"""What one benchmark run measures: :class:`BenchConfig`, its quick form, and where progress lines go."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = ["QUICK_ANSWER", "BenchConfig", "Progress"]

#: The quick form's scripted answer: two plain sentences, about 10 s of speech.
QUICK_ANSWER: Final = (
    "Here's a quick overview of the Premium plan, which suits most households well. "
    "It costs $24.99 per month, and you can cancel at any time without a fee."
)

#: Where progress lines go (stderr in the CLI).
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BenchConfig:
    """How much to measure.

    Attributes:
        quick: The CI smoke form (fewer trials, fewer concurrency levels, a shorter scripted answer).
        trials: Timed trials per figure (after the warm-up).
        warmups: Untimed warm-up rounds before the TTS-only and engine trials.
        concurrency_levels: Concurrent session counts.
        concurrency_rounds: Rounds per level (each round is one request per session).
        payload_formats: Encoded formats measured on Leg 3 besides pcm16; these runs are also the
            end-to-end warm-up.
        voice: The voice for TTS-only and engine figures; the engine's default when None.
        answer_text: The scripted model's answer; its built-in multi-paragraph answer when None.
    """

    quick: bool = False
    trials: int = 5
    warmups: int = 1
    concurrency_levels: tuple[int, ...] = (1, 2, 4, 8)
    concurrency_rounds: int = 5
    payload_formats: tuple[str, ...] = ("mp3", "opus")
    voice: str | None = None
    answer_text: str | None = None

    @classmethod
    def quick_form(cls) -> BenchConfig:
        """The CI smoke form: 2 trials, levels 1 and 2, one round each, a 2-sentence scripted answer.

        The shorter answer keeps the same pacing (first sentence at 0.6 s, all text at 5.0 s) but needs a
        third of the synthesis, which is what a 2-core CI runner can afford.
        """
        return cls(
            quick=True,
            trials=2,
            warmups=1,
            concurrency_levels=(1, 2),
            concurrency_rounds=1,
            answer_text=QUICK_ANSWER,
        )
