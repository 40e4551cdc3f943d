"""The tables (markdown, printed and pasted into the docs) and the PNG of ``bench --talk``'s calls:
the turn-taking table (turn model beside silence timer) and ``bench --talk --peers``' side-by-side table."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from strands_voice_tools.bench.peers_report import lower_wins
from strands_voice_tools.bench.plot import _import_pyplot, label_axis, save_figure, side_by_side, value_bars
from strands_voice_tools.bench.report import instruction_set_name

__all__ = [
    "PEER_ROWS",
    "TURN_ROWS",
    "calls_table",
    "format_talk_peers",
    "format_turns",
    "write_talk_peers_plot",
]

#: A row: (field of a system's entry, what it is, how it is shown: ``ms`` median and p95, ``count`` n of m,
#: ``mb``, ``s``). Every figure is lower-is-better.
Row = tuple[str, str, str]

TURN_ROWS: Final[tuple[Row, ...]] = (
    ("cut_mid_sentence", "paused sentences cut (taken before their end, or split in two turns)", "count"),
    (
        "end_of_turn_question_ms",
        "end-of-turn delay, finished questions (end of speech -> final transcript)",
        "ms",
    ),
    ("end_of_turn_ms", "end-of-turn delay, every whole turn (questions and uncut paused sentences)", "ms"),
    ("false_barge_ins", "false barge-ins (a backchannel or a noise ended the answer)", "count"),
    ("backchannel_stops", "backchannels that ended the answer", "count"),
    ("noise_stops", "noise bursts that ended the answer", "count"),
    ("pause_reaction_ms", "pause reaction (first sound over an answer -> its audio paused or stopped)", "ms"),
    ("barge_in_ms", "barge-in (first sound of the interruption -> the answer's audio stopped)", "ms"),
    ("voice_to_voice_ms", "voice-to-voice (end of speech -> first answer sound)", "ms"),
)
PEER_ROWS: Final[tuple[Row, ...]] = (
    ("voice_to_voice_ms", "voice-to-voice (end of the caller's speech -> first answer sound)", "ms"),
    ("barge_in_ms", "barge-in (first sound of the interruption -> the answer's audio stopped)", "ms"),
    ("end_of_turn_question_ms", "end-of-turn delay, finished questions (-> final transcript)", "ms"),
    ("cut_mid_sentence", "paused sentences cut (taken before their end, or split in two turns)", "count"),
    ("backchannel_stops", "backchannels that ended the answer", "count"),
    ("noise_stops", "noise bursts that ended the answer", "count"),
    ("pause_reaction_ms", "pause reaction (first sound over an answer -> its audio paused or stopped)", "ms"),
    ("peak_mb", "peak memory (resident, the system's process tree)", "mb"),
    ("ready_mb", "memory when ready", "mb"),
    ("load_s", "start-up (process start -> ready for a call)", "s"),
)
_COLORS: Final = {
    "strands-voice": "#2ca02c",
    "strands-voice-ws": "#98df8a",
    "pipecat": "#9467bd",
    "strands-voice, silence timer": "#7f7f7f",
}


def _value(entry: dict[str, Any], field: str, how: str) -> float | None:
    """The figure a row compares (a median, a rate, a number), None where it was not measured."""
    value = entry.get(field)
    if value is None:
        return None
    if how == "ms":
        return float(value["median"])
    if how == "count":
        return None if not value["of"] else value["n"] / value["of"]
    return float(value)


def _cell(entry: dict[str, Any], field: str, how: str) -> str:
    value = entry.get(field)
    if value is None or (how == "count" and not value["of"]):
        return "-"
    if how == "ms":
        return f"{value['median']:,.0f} / {value['p95']:,.0f} ms"
    if how == "count":
        return f"{value['n']} of {value['of']}"
    if how == "s":
        return f"{value:.1f} s"
    return f"{value:,.0f} MB"


def calls_table(peers: Sequence[dict[str, Any]], rows: Sequence[Row]) -> list[str]:
    """A markdown table: a row per figure measured, a column per system, and which is lowest."""
    names = [peer["name"] for peer in peers]
    lines = [f"| figure | {' | '.join(names)} | lowest |", f"|---|{'---:|' * len(names)}---|"]
    for field, label, how in rows:
        if all(_value(peer, field, how) is None for peer in peers):
            continue
        if how == "ms":
            label = f"{label}, median / p95"
        cells = " | ".join(_cell(peer, field, how) for peer in peers)
        best = (
            lower_wins({peer["name"]: _value(peer, field, how) for peer in peers}) if len(peers) > 1 else None
        )
        lines.append(f"| {label} | {cells} | {best or '-'} |")
    return lines


def _heading(results: dict[str, Any], what: str) -> str:
    config, machine = results["config"], results["machine"]
    return (
        f"strands-voice {what} ({config['trials']} calls per system after {config['warmups']} warm-up, "
        f"voices {', '.join(config['voices'])}): {machine.get('cpu_model')} "
        f"({instruction_set_name(machine)}), "
        f"{machine.get('cpu_cores')} cores, {machine.get('ram_gib')} GiB RAM, load average "
        f"{machine.get('load_average_start')} -> {machine.get('load_average_end')}"
    )


def format_turns(results: dict[str, Any]) -> str:
    """``bench --talk``'s turn-taking table, with the silence timer's sweep under it."""
    lines = [_heading(results, "bench --talk, turn-taking"), "", *calls_table(results["peers"], TURN_ROWS)]
    if not results.get("turn_model"):
        lines += [
            "",
            "The turn-end model is not installed here: both columns ran the listener's silence timer.",
        ]
    sweep = results.get("silence_sweep")
    if sweep:
        pauses = sweep["longest_pauses_s"]
        lines += [
            "",
            f"Silence timer swept over the paused sentences (longest pause as the VAD sees it: "
            f"{min(pauses):.2f}-{max(pauses):.2f} s): at most 5 % cut needs a timer of "
            f"{sweep['timer_s_at_target']} s, an end-of-turn delay of {sweep['delay_ms_at_target']} ms.",
        ]
    return "\n".join([*lines, "", f"command: {results.get('command')}"])


def format_talk_peers(results: dict[str, Any]) -> str:
    """``bench --talk --peers``' side-by-side table and each system's setup."""
    setups = [f"- {peer['name']}: {peer['setup']}" for peer in results["peers"]]
    return "\n".join(
        [
            _heading(results, "bench --talk --peers"),
            "",
            *calls_table(results["peers"], PEER_ROWS),
            "",
            *setups,
            "",
            f"command: {results.get('command')}",
        ]
    )


def write_talk_peers_plot(results: dict[str, Any], path: str | Path) -> Path:
    """Three panels, the systems side by side: voice-to-voice and barge-in (median, p95 above it), the
    share of paused sentences cut and of backchannels that ended the answer, and peak memory.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = _import_pyplot()
    peers = results["peers"]
    figure, axes = plt.subplots(
        1, 3, figsize=(12, 4.2), layout="constrained", gridspec_kw={"width_ratios": [2, 2, 1]}
    )
    for index, peer in enumerate(peers):
        style = {"label": peer["name"], "color": _COLORS.get(peer["name"], "#1f77b4")}
        width, offset = side_by_side(index, len(peers))
        times = [_value(peer, field, "ms") or 0.0 for field in ("voice_to_voice_ms", "barge_in_ms")]
        value_bars(axes[0], [offset, 1 + offset], times, width, "{:.0f}", **style)
        p95 = [(peer.get(field) or {}).get("p95") for field in ("voice_to_voice_ms", "barge_in_ms")]
        axes[0].scatter(
            [p + offset for p, value in enumerate(p95) if value is not None],
            [value for value in p95 if value is not None],
            marker="_",
            color="black",
        )
        shares = [
            100 * (_value(peer, field, "count") or 0.0) for field in ("cut_mid_sentence", "backchannel_stops")
        ]
        value_bars(axes[1], [offset, 1 + offset], shares, width, "{:.0f}%", **style)
        value_bars(axes[2], [offset], [peer.get("peak_mb") or 0.0], width, "{:.0f}", **style)
    axes[0].set_xticks([0, 1], ["voice-to-voice", "barge-in"])
    axes[1].set_xticks([0, 1], ["paused sentences cut", "backchannels that\nended the answer"])
    axes[2].set_xticks([])
    label_axis(axes[0], "median (bar) and p95 (tick)", "ms", legend=False)
    label_axis(axes[1], "share of the utterances", "%", legend=False)
    label_axis(axes[2], "peak memory, process tree", "MB", legend=False)
    handles, names = axes[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=len(peers), fontsize=8)
    machine = results["machine"]
    title = (
        f"strands-voice bench --talk --peers - {machine.get('cpu_model')} "
        f"({instruction_set_name(machine)}), "
        f"{results['config']['trials']} calls per system, alternated"
    )
    return save_figure(plt, figure, title, path)
