"""A system's turn-taking figures over its calls, and the silence timer swept over the same sentences.

:func:`summarize_turns` folds every utterance's figures (:func:`.call_log.turn_figures`) of one system into
the report's fields (milliseconds: median, p95 and every value; counts as ``{"n", "of"}``).
:func:`silence_sweep` says what a plain silence timer would do with the same paused sentences, the way
end-of-turn benchmarks report a detector (livekit's eot-bench among them): the shortest timer that cuts at
most 5 % of them, and the end-of-turn delay it costs on finished questions. A timer of ``t`` cuts a
sentence whose longest pause, as the VAD and the turn detector see it (:func:`longest_pause_s`), lasts
``t`` or more; its delay is the live silence timer's measured delay moved by ``t`` less that timer's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from strands_voice_tools.bench.call_log import UtteranceFigures, kinds
from strands_voice_tools.bench.stats import percentile

__all__ = ["CUT_TARGET", "longest_pause_s", "ms_summary", "silence_sweep", "summarize_turns"]

#: The cut-off rate an end-of-turn detector is compared at.
CUT_TARGET: Final = 0.05
#: The silence timers :func:`silence_sweep` tries (seconds).
TIMERS: Final = tuple(round(0.2 + 0.05 * step, 2) for step in range(37))


def ms_summary(seconds: Sequence[float | None]) -> dict[str, Any] | None:
    """Median, p95 and every value of ``seconds`` in milliseconds (Nones left out); None when empty."""
    values = [1000.0 * value for value in seconds if value is not None]
    if not values:
        return None
    return {
        "median": round(percentile(values, 50.0), 1),
        "p95": round(percentile(values, 95.0), 1),
        "n": len(values),
        "values": [round(value, 1) for value in values],
    }


def _count(figures: Sequence[UtteranceFigures], flag: str) -> dict[str, int]:
    return {"n": sum(1 for figure in figures if getattr(figure, flag)), "of": len(figures)}


def summarize_turns(figures: Sequence[UtteranceFigures]) -> dict[str, Any]:
    """One system's figures over all its utterances (see the module docstring)."""
    questions = kinds(figures, "question")
    paused = kinds(figures, "paused")
    over = [
        figure for figure in kinds(figures, *("backchannel", "noise", "interruption")) if figure.over_answer
    ]
    backchannels, noises = kinds(over, "backchannel"), kinds(over, "noise")
    interruptions = kinds(over, "interruption")
    uncut = [figure for figure in paused if not figure.cut]
    return {
        "voice_to_voice_ms": ms_summary([figure.voice_to_voice_s for figure in questions]),
        "end_of_turn_ms": ms_summary([figure.end_of_turn_s for figure in (*questions, *uncut)]),
        "end_of_turn_question_ms": ms_summary([figure.end_of_turn_s for figure in questions]),
        "barge_in_ms": ms_summary([figure.reaction_s for figure in interruptions]),
        "pause_reaction_ms": ms_summary([figure.reaction_s for figure in over]),
        "cut_mid_sentence": _count(paused, "cut"),
        "backchannel_stops": _count(backchannels, "stopped"),
        "noise_stops": _count(noises, "stopped"),
        "false_barge_ins": {
            "n": sum(1 for figure in (*backchannels, *noises) if figure.stopped),
            "of": len(backchannels) + len(noises),
        },
        "interruptions_stopped": _count(interruptions, "stopped"),
        "said_over_nothing": sum(
            1 for figure in kinds(figures, "backchannel", "noise", "interruption") if not figure.over_answer
        ),
        "end_of_turn_by": dict(Counter(figure.end_of_turn_by for figure in figures if figure.end_of_turn_by)),
    }


def silence_sweep(
    longest_pauses: Sequence[float], measured_delay_s: float | None, measured_timer_s: float
) -> dict[str, Any]:
    """A silence timer over the paused sentences (see the module docstring).

    Args:
        longest_pauses: Each paused sentence's longest pause (seconds).
        measured_delay_s: The live silence timer's median end-of-turn delay on finished questions.
        measured_timer_s: That timer's setting (``end_silence_s``).

    Returns:
        ``rows`` (timer, cut rate, delay in ms) and the first timer at or below :data:`CUT_TARGET` cuts
        with its delay (None where none is, or nothing was measured).
    """
    rows: list[dict[str, Any]] = []
    for timer in TIMERS:
        cut = sum(1 for pause in longest_pauses if pause >= timer) / max(len(longest_pauses), 1)
        delay = None if measured_delay_s is None else 1000.0 * (measured_delay_s - measured_timer_s + timer)
        rows.append({"timer_s": timer, "cut_rate": round(cut, 3), "delay_ms": _round(delay)})
    met = next((row for row in rows if row["cut_rate"] <= CUT_TARGET), None) if longest_pauses else None
    return {
        "longest_pauses_s": [round(pause, 3) for pause in longest_pauses],
        "rows": rows,
        "timer_s_at_target": None if met is None else met["timer_s"],
        "delay_ms_at_target": None if met is None else met["delay_ms"],
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def longest_pause_s(pcm16: bytes) -> float:
    """The longest pause inside ``pcm16`` (16 kHz) as the library's VAD and turn detector hear it: from a
    ``CallerPaused`` to the next ``CallerResumed`` (the listen group)."""
    import numpy as np

    from strands_voice.listen import CallerPaused, CallerResumed, ListenSettings, SileroVad, TurnDetector

    settings = ListenSettings(end_of_turn="silence", end_silence_s=60.0, max_turn_s=600.0)
    detector, vad = TurnDetector(settings), SileroVad()
    audio = np.frombuffer(pcm16, dtype="<i2").astype(np.float32) / 32768.0
    frame = settings.frame_samples
    padded = np.concatenate([audio, np.zeros(frame - len(audio) % frame, dtype=np.float32)])
    longest, paused_at = 0.0, None
    for offset in range(0, len(padded), frame):
        for event in detector.feed(vad.probability(padded[offset : offset + frame])):
            if isinstance(event, CallerPaused):
                paused_at = event.at_s
            elif isinstance(event, CallerResumed) and paused_at is not None:
                longest, paused_at = max(longest, event.at_s - paused_at), None
    return longest
