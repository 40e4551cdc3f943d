"""The scheduling bench's table (markdown, printed and pasted into the docs) and its PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_voice_tools.bench.plot import _import_pyplot, label_axis, save_figure, side_by_side, value_bars
from strands_voice_tools.bench.report import format_machine
from strands_voice_tools.bench.schedule import POLICIES

__all__ = ["format_schedule", "write_schedule_plot"]

_COLORS = {"fifo": "#7f7f7f", "deadline, no lane": "#98df8a", "deadline": "#2ca02c"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms"


def _measured(results: dict[str, Any]) -> list[str]:
    """The configurations in ``results`` (a run from before the opening lane has two)."""
    return [policy for policy in POLICIES if policy in results["staggered"]]


def format_schedule(results: dict[str, Any]) -> str:
    """FIFO against deadline: one row per session count and configuration, then the load figure."""
    staggered = results["staggered"]
    lines = [
        f"strands-voice bench --schedule: {format_machine(results['machine'])}",
        "",
        "| sessions | scheduling | TTFA p50 | TTFA p95 | p95 / lone p50 | stall per session (mean / max) "
        "| sessions with zero stall | load average (1 min) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for count in results["config"]["sessions"]:
        for policy in _measured(results):
            row = staggered[policy][str(count)]
            lone = staggered[policy][str(results["config"]["sessions"][0])]["ttfa_p50_s"]
            loads = [load[0] for load in row["load_average"] if load]
            lines.append(
                f"| {count} | {policy} | {_ms(row['ttfa_p50_s'])} | {_ms(row['ttfa_p95_s'])} "
                f"| {row['ttfa_p95_s'] / lone:.2f}x "
                f"| {row['stall_mean_s']:.2f} s / {row['stall_max_s']:.2f} s "
                f"| {row['zero_stall']} of {row['sessions']} | {', '.join(f'{v:.1f}' for v in loads)} |"
            )
    load = results["load"]
    lines += [
        "",
        f"Endpoint load: {load['sessions']} sessions x {load['messages']} messages at once "
        "(time to first audio)",
        "",
        "| scheduling | TTFA p50 | TTFA p95 | load average (1 min) |",
        "|---|---:|---:|---:|",
    ]
    for policy in _measured(results):
        row = load[policy]
        average = row["load_average"][0] if row["load_average"] else float("nan")
        lines.append(f"| {policy} | {_ms(row['ttfa_p50_s'])} | {_ms(row['ttfa_p95_s'])} | {average:.1f} |")
    return "\n".join(lines)


def write_schedule_plot(results: dict[str, Any], path: str | Path) -> Path:
    """Two panels by session count, the configurations side by side: TTFA p95, and mean stall per session.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = _import_pyplot()
    counts = [str(count) for count in results["config"]["sessions"]]
    figure, (ttfa_axis, stall_axis) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    policies = _measured(results)
    for index, policy in enumerate(policies):
        rows = [results["staggered"][policy][count] for count in counts]
        width, offset = side_by_side(index, len(policies))
        positions = [p + offset for p in range(len(counts))]
        style = {"label": policy, "color": _COLORS[policy]}
        value_bars(ttfa_axis, positions, [row["ttfa_p95_s"] * 1e3 for row in rows], width, "{:.0f}", **style)
        value_bars(stall_axis, positions, [row["stall_mean_s"] for row in rows], width, "{:.1f}", **style)
    for axis, title, unit in (
        (ttfa_axis, "time to first audio, p95", "ms"),
        (stall_axis, "stall per session (mean)", "s"),
    ):
        axis.set_xticks(range(len(counts)), counts)
        axis.set_xlabel(f"staggered sessions (one every {results['config']['stagger_s']} s)")
        label_axis(axis, title, unit)
    title = f"strands-voice bench --schedule - {results['machine'].get('cpu_model')}"
    return save_figure(plt, figure, title, path)
