"""``bench --peers``: the side-by-side table (markdown, printed and pasted into the docs) and its PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_voice_tools.bench.plot import _import_pyplot, label_axis, save_figure, side_by_side, value_bars
from strands_voice_tools.bench.report import format_machine
from strands_voice_tools.bench.stats import median_or_none

__all__ = ["PEER_ROWS", "format_peers", "lower_wins", "write_peers_plot"]

#: The table's rows: (field of a peer's entry, what it is, unit). Every figure is lower-is-better.
PEER_ROWS: tuple[tuple[str, str, str], ...] = (
    ("first_audio_ms", "first audio, 44-char sentence", "ms"),
    ("first_audio_ms_long", "first audio, 197-char sentence", "ms"),
    ("first_audio_ms_answer", "first audio, 4-sentence answer (267 chars)", "ms"),
    ("first_heard_ms", "first audible sound, 44-char sentence", "ms"),
    ("first_heard_ms_long", "first audible sound, 197-char sentence", "ms"),
    ("first_heard_ms_answer", "first audible sound, 4-sentence answer", "ms"),
    ("rtf", "real-time factor (time to the end / audio seconds)", "x"),
    ("ready_mb", "memory when ready (process VmHWM)", "MB"),
    ("peak_mb", "peak memory (process VmHWM)", "MB"),
    ("load_s", "start to ready (process start, model load, warm-up)", "s"),
)

_COLORS = {"strands-voice": "#2ca02c", "kokoro-onnx": "#1f77b4", "kokoro-onnx, endpoint graph": "#9ecae1"}


def _cell(value: Any, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.3f}"
    if unit == "s":
        return f"{value:.1f} s"
    return f"{value:,.0f} {unit}"


def lower_wins(values: dict[str, float | None]) -> str | None:
    """The name with the lowest value, or None when a value is missing or two tie."""
    if not values or any(value is None for value in values.values()):
        return None
    ranked = sorted(values.items(), key=lambda item: float(item[1] or 0.0))
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


def format_peers(results: dict[str, Any]) -> str:
    """One row per figure, one column per peer (medians), and which is lower."""
    peers = results["peers"]
    names = [peer["name"] for peer in peers]
    lines = [
        f"strands-voice bench --peers ({results['config']['trials']} trials, medians): "
        f"{format_machine(results['machine'])}, kokoro-onnx {results['machine'].get('kokoro_onnx')}",
        "",
        f"| figure | {' | '.join(names)} | lower |",
        f"|---|{'---:|' * len(names)}---|",
    ]
    for field, label, unit in PEER_ROWS:
        values = {peer["name"]: peer.get(field) for peer in peers}
        if all(value is None for value in values.values()):
            continue
        if field == "rtf":
            label = f"{label}, {peers[0].get('rtf_text')}"
        cells = " | ".join(_cell(values[name], unit) for name in names)
        lines.append(f"| {label} | {cells} | {lower_wins(values) or '-'} |")
    g2p = "; ".join(f"{peer['name']}: {peer.get('g2p')}" for peer in peers)
    lines += ["", f"G2P: {g2p}", f"command: {results.get('command')}"]
    return "\n".join(lines)


def write_peers_plot(results: dict[str, Any], path: str | Path) -> Path:
    """Three panels, the peers side by side: time to first audio per text, real-time factor, peak memory.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = _import_pyplot()
    peers = results["peers"]
    figure, axes = plt.subplots(
        1, 3, figsize=(12, 4.2), layout="constrained", gridspec_kw={"width_ratios": [3, 1, 1]}
    )
    labels = list(peers[0]["texts"])
    for index, peer in enumerate(peers):
        style = {"label": peer["name"], "color": _COLORS.get(peer["name"], "#7f7f7f")}
        width, offset = side_by_side(index, len(peers))
        first = [median_or_none(peer["texts"][label]["first_audio_ms"]) or 0.0 for label in labels]
        value_bars(axes[0], [p + offset for p in range(len(labels))], first, width, "{:.0f}", **style)
        value_bars(axes[1], [offset], [peer.get("rtf") or 0.0], width, "{:.2f}", **style)
        value_bars(axes[2], [offset], [peer.get("peak_mb") or 0.0], width, "{:.0f}", **style)
    texts = [f"{label}\n({peers[0]['texts'][label]['chars']} chars)" for label in labels]
    axes[0].set_xticks(range(len(labels)), texts)
    axes[0].set_yscale("log")  # the peers differ by up to two orders of magnitude
    for axis, title, unit in (
        (axes[0], "time to first audio (median, log scale)", "ms"),
        (axes[1], f"real-time factor, {peers[0].get('rtf_text')}", "time to the end / audio s"),
        (axes[2], "peak memory", "MB"),
    ):
        if axis is not axes[0]:
            axis.set_xticks([])
        label_axis(axis, title, unit, legend=False)
    handles, names = axes[0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside lower center", ncols=len(peers), fontsize=8)
    title = (
        f"strands-voice bench --peers - {results['machine'].get('cpu_model')}, "
        f"{results['config']['trials']} trials alternated"
    )
    return save_figure(plt, figure, title, path)
