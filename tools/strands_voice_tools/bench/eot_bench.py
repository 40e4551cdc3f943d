"""The eot-bench measure, ours: false cut-offs against delay for the verdict, Smart Turn alone and a timer.

Every system decides, at each pause the listener's detector judges, the silence after which it ends the
turn (its *wait*). The detector itself is replayed over each turn of the labelled set (its recorded VAD
probabilities, frame by frame), the system's wait handed to it the moment it judges a pause, from the
evidence recorded there (:mod:`strands_voice_tools.bench.eot_evidence`):

- a turn is **cut off** when the detector ends it before the caller's last sound (at a ``hold`` pause,
  one the caller went on after);
- otherwise its **delay** is from the caller's last sound to the turn's end.

Each system is swept over its settings: the silence timer over its timeout; Smart Turn alone over its
threshold (ending the turn at or above it) and the timeout that ends a turn below it; the verdict over a
factor on its waits and its open-turn limit; both also over the least silence after which a turn judged
complete ends (Pipecat's VAD stop time). The figures, as livekit/eot-bench gives them: the false
cut-off rate (cut turns / turns) at a 300 ms and a 500 ms budget (the fewest cut-offs of the settings whose
mean delay is within it) and the mean delay at 5 % false cut-offs (the least delay of the settings that
cut at most 5 %). Computed, not timed: the live system adds the judging's compute (the recognition of the
turn so far, Smart Turn) to a decision made at once; ``bench --talk``'s calls measure that.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from strands_voice.listen import THRESHOLDS, JudgeTurn, ListenSettings, TurnDetector, TurnEnded, judge_turn
from strands_voice_tools.bench.eot_evidence import Evidence, TurnEvidence, gather
from strands_voice_tools.machine import load_average

__all__ = [
    "SYSTEMS",
    "Outcome",
    "bench_eot",
    "eot_figures",
    "format_eot",
    "main",
    "replay",
    "sweep",
    "verdict_wait",
]

#: The listener's open-turn limit (``ListenSettings.incomplete_silence_s``).
OPEN_LIMIT_S: Final = 2.0
BUDGETS_S: Final = (0.3, 0.5)
MAX_CUT: Final = 0.05

#: A system at one setting: the silence that ends the turn, from the evidence at a pause.
Wait = Callable[[Evidence], float]
#: The detector's own open-turn limit in a replay: never (every system names its wait).
_NEVER_S: Final = 12.0


@dataclass(frozen=True)
class Outcome:
    """What one setting of a system did over the set."""

    setting: float | tuple[float, ...]
    cut: int
    turns: int
    delays: tuple[float, ...]

    @property
    def cut_rate(self) -> float:
        """Cut turns / turns."""
        return self.cut / self.turns if self.turns else 0.0

    @property
    def mean_delay(self) -> float:
        """The mean delay of the turns not cut (inf when every turn was cut)."""
        return statistics.fmean(self.delays) if self.delays else math.inf


def _replay_turn(turn: TurnEvidence, wait: Wait, settings: ListenSettings) -> float | None:
    """The turn's delay under ``wait`` (None: cut off), the detector fed its VAD probabilities."""
    detector = TurnDetector(settings, judged_by_model=True)
    seconds_per_frame = settings.frame_samples / settings.sample_rate
    # The recorded silence after the turn, then more of it for a system that waits longer.
    silence_after = [0.0] * round(_NEVER_S / seconds_per_frame)
    for probability in itertools.chain(turn.probabilities, silence_after):
        events: list[Any] = detector.feed(probability)
        for event in list(events):
            if isinstance(event, JudgeTurn) and event.pause in turn.pauses:
                evidence = turn.pauses[event.pause]
                events += detector.judged(event.pause, False, evidence.p_audio, wait(evidence))
        for event in events:
            if isinstance(event, TurnEnded):
                ended = detector.position / settings.sample_rate
                if ended < turn.speech_end_s - seconds_per_frame:
                    return None  # ended while the caller was still going on
                return max(0.0, ended - turn.speech_end_s)
    return None  # never ended: cut at the turn limit


def replay(turns: Sequence[TurnEvidence], wait: Wait) -> tuple[int, list[float]]:
    """The cut turns and the delays of the others, for one setting's ``wait``: the listener's detector
    replayed over each turn, a verdict handed to it the moment it asks for one."""
    settings = ListenSettings(incomplete_silence_s=_NEVER_S, max_turn_s=_NEVER_S + 30.0)
    cut, delays = 0, []
    for turn in turns:
        delay = _replay_turn(turn, wait, settings)
        if delay is None:
            cut += 1
        else:
            delays.append(delay)
    return cut, delays


def _timer(timeout: float) -> Wait:
    return lambda _pause: timeout


def _smart_turn(least: float, threshold: float, timeout: float) -> Wait:
    return lambda pause: least if pause.p_audio >= threshold else timeout


def verdict_wait(factor: float = 1.0, least: float | None = None) -> Wait:
    """The verdict's wait at every pause, its waits scaled by ``factor`` and the least silence of a
    complete turn ``least`` (1 and None: as shipped)."""
    thresholds = THRESHOLDS.scaled(factor)
    if least is not None:
        thresholds = dataclasses.replace(thresholds, complete_wait_s=least, question_wait_s=least)

    def wait(pause: Evidence) -> float:
        verdict = judge_turn(pause.p_audio, pause.words, fall=pause.fall, thresholds=thresholds)
        if verdict.wait_s is None:
            return 0.0 if verdict.complete else OPEN_LIMIT_S * factor
        return verdict.wait_s

    return wait


_TIMEOUTS: Final = tuple(round(0.1 + 0.05 * step, 2) for step in range(49))  # 0.1 .. 2.5 s
_THRESHOLDS: Final = tuple(round(0.05 * step, 2) for step in range(1, 20))
#: The least silence after which a system may end a turn it judges complete (Pipecat's VAD stop time).
_LEAST: Final = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
_FACTORS: Final = tuple(round(float(f), 3) for f in np.geomspace(0.2, 5.0, 33))
#: Each system's settings and its wait at each.
SYSTEMS: Final[dict[str, Callable[[], list[tuple[Any, Wait]]]]] = {
    "verdict": lambda: [
        ((least, factor), verdict_wait(factor, least)) for least in _LEAST for factor in _FACTORS
    ],
    "smart_turn": lambda: [
        ((least, threshold, timeout), _smart_turn(least, threshold, timeout))
        for least in _LEAST
        for threshold in _THRESHOLDS
        for timeout in _TIMEOUTS
    ],
    "silence": lambda: [(timeout, _timer(timeout)) for timeout in _TIMEOUTS],
}


def sweep(turns: Sequence[TurnEvidence], system: str) -> list[Outcome]:
    """Every setting of ``system`` replayed over ``turns``."""
    outcomes = []
    for setting, wait in SYSTEMS[system]():
        cut, delays = replay(turns, wait)
        outcomes.append(Outcome(setting, cut, len(turns), tuple(delays)))
    return outcomes


def _figures(outcomes: list[Outcome]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for budget in BUDGETS_S:
        within = [o for o in outcomes if o.mean_delay <= budget]
        best = min(within, key=lambda o: (o.cut_rate, o.mean_delay)) if within else None
        figures[f"cut_at_{round(budget * 1000)}ms"] = None if best is None else round(best.cut_rate, 3)
    safe = [o for o in outcomes if o.cut_rate <= MAX_CUT]
    best = min(safe, key=lambda o: o.mean_delay) if safe else None
    figures["delay_at_5pct_s"] = None if best is None else round(best.mean_delay, 3)
    figures["setting_at_5pct"] = None if best is None else best.setting
    return figures


def _shipped(turns: Sequence[TurnEvidence]) -> dict[str, Any]:
    """The verdict as shipped (factor 1), over all turns and per source."""
    out: dict[str, Any] = {}
    for group, members in (
        ("all", list(turns)),
        ("human", [t for t in turns if t.human]),
        ("endpoint", [t for t in turns if not t.human]),
    ):
        if not members:
            continue
        cut, delays = replay(members, verdict_wait(1.0))
        out[group] = {
            "turns": len(members),
            "cut": cut,
            "mean_delay_s": round(statistics.fmean(delays), 3) if delays else None,
            "median_delay_s": round(statistics.median(delays), 3) if delays else None,
            "max_delay_s": round(max(delays), 3) if delays else None,
            "within_500ms": sum(d <= 0.5 for d in delays),
        }
    return out


def eot_figures(turns: Sequence[TurnEvidence]) -> dict[str, Any]:
    """The figures of every system side by side, and the shipped verdict's own (JSON-ready)."""
    holds = sum(t.holds for t in turns)
    return {
        "turns": len(turns),
        "human_turns": sum(t.human for t in turns),
        "hold_pauses": holds,
        "systems": {name: _figures(sweep(turns, name)) for name in SYSTEMS},
        "shipped_verdict": _shipped(turns),
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{1000 * value:.0f} ms"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def format_eot(figures: dict[str, Any]) -> str:
    """The figures as a table."""
    lines = [
        f"End of turn (eot-bench measure): {figures['turns']} turns ({figures['human_turns']} human), "
        f"{figures['hold_pauses']} hold pauses",
        "",
        f"{'system':<12} {'cut @300 ms':>12} {'cut @500 ms':>12} {'delay @5 % cut':>15}",
    ]
    for name, f in figures["systems"].items():
        lines.append(
            f"{name:<12} {_pct(f['cut_at_300ms']):>12} {_pct(f['cut_at_500ms']):>12} "
            f"{_ms(f['delay_at_5pct_s']):>15}"
        )
    lines.append("")
    for group, f in figures["shipped_verdict"].items():
        lines.append(
            f"verdict as shipped, {group}: {f['cut']}/{f['turns']} cut, delay mean "
            f"{_ms(f['mean_delay_s'])}, median {_ms(f['median_delay_s'])}, max {_ms(f['max_delay_s'])}, "
            f"{f['within_500ms']} ended within 500 ms"
        )
    return "\n".join(lines)


def bench_eot(
    engine: Any, voices: tuple[str, ...], progress: Callable[[str], None], evidence_path: str | None = None
) -> dict[str, Any]:
    """``bench --talk``'s end-of-turn figures: the labelled set (the endpoint's ``voices`` and the human
    recordings where installed), its evidence gathered once (or read back from ``evidence_path``, a pickle
    this function wrote), every system replayed over it."""
    import pickle
    from pathlib import Path

    from strands_voice.listen import SileroVad, SmartTurn, WhisperRecognizer
    from strands_voice_tools.bench.eot_set import endpoint_turns, human_turns

    humans = human_turns()
    if not humans:
        progress("no human recordings: `apt-get install asterisk-core-sounds-en-wav` adds them")
    turns = [*humans, *endpoint_turns(engine, voices)]
    kept = Path(evidence_path) if evidence_path else None
    if kept is not None and kept.is_file():
        evidence = pickle.loads(kept.read_bytes())
    else:
        progress(f"end of turn: gathering the evidence at every pause of {len(turns)} turns")
        evidence = gather(turns, SileroVad(), SmartTurn(), WhisperRecognizer())
        if kept is not None:
            kept.write_bytes(pickle.dumps(evidence))
    figures = eot_figures(evidence)
    figures["load_average"] = load_average()
    return figures


def main(argv: list[str] | None = None) -> int:
    """The end-of-turn figures alone (``bench --talk`` prints them after its calls)."""
    import argparse
    import json

    from strands_voice_tools.bench.turn_set import VOICES
    from strands_voice_tools.demo import load_tts_engine

    parser = argparse.ArgumentParser(prog="python -m strands_voice_tools.bench.eot_bench")
    parser.add_argument("--voices", type=int, default=len(VOICES), help="how many of the endpoint's voices")
    parser.add_argument("--json", type=str, default=None, help="write the figures here")
    parser.add_argument("--evidence", type=str, default=None, help="keep the gathered evidence here (reused)")
    args = parser.parse_args(argv)
    figures = bench_eot(load_tts_engine(), VOICES[: args.voices], print, args.evidence)
    print(format_eot(figures))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(figures, out, indent=2)
            out.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
