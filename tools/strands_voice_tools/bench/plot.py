"""Draw the benchmark's PNG: bidi and batch timelines (text arrival vs audio arrival) and TTFA bars.

matplotlib is optional (the ``bench`` extra) and imported only here, with the Agg backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from strands_voice_protocol.errors import MissingDependencyError

__all__ = ["write_plot"]

_TEXT_COLOR = "#1f77b4"
_AUDIO_COLOR = "#d62728"
_PLAY_COLOR = "#2ca02c"


def _import_pyplot() -> Any:
    try:
        import matplotlib
    except ImportError as error:
        raise MissingDependencyError(
            "--plot needs matplotlib: pip install 'strands-voice[bench]' (from a clone: uv sync)"
        ) from error
    matplotlib.use("Agg")  # no display needed; must precede the pyplot import
    import matplotlib.pyplot as plt

    return plt


def _draw_timeline(axis: Any, mode: str, timeline: dict[str, Any], x_max: float) -> None:
    """Three lanes on one time axis: text deltas, audio chunks, and what a player would play."""
    text_times = [row[0] for row in timeline["text"]]
    audio_times = [row[0] for row in timeline["audio"]]
    axis.eventplot(
        [audio_times, text_times],
        lineoffsets=[1, 2],
        linelengths=0.6,
        colors=[_AUDIO_COLOR, _TEXT_COLOR],
        linewidths=0.8,
    )
    playback = [(start, end - start) for start, end in timeline["playback"]]
    axis.broken_barh(playback, (-0.3, 0.6), facecolors=_PLAY_COLOR, alpha=0.8)
    ttfa = timeline["ttfa_s"]
    if ttfa is not None:
        axis.axvline(ttfa, color=_AUDIO_COLOR, linestyle="--", linewidth=1)
        axis.annotate(
            f"first audio {ttfa * 1e3:.0f} ms",
            (ttfa, 2.45),
            xytext=(4, 0),
            textcoords="offset points",
            color=_AUDIO_COLOR,
            fontsize=8,
        )
    text_complete = timeline.get("first_chunk_text_complete_s")
    if text_complete is not None:
        axis.axvline(text_complete, color=_TEXT_COLOR, linestyle=":", linewidth=1)
        axis.annotate(
            f"1st chunk's text {text_complete * 1e3:.0f} ms",
            (text_complete, 2.45),
            xytext=(-4, 0),
            textcoords="offset points",
            ha="right",
            color=_TEXT_COLOR,
            fontsize=8,
        )
    stall = timeline.get("stall_s", 0.0)
    axis.set_yticks([0, 1, 2], ["playback", "audio arrives", "text arrives"])
    axis.set_ylim(-0.6, 2.8)
    axis.set_xlim(0, x_max)
    axis.set_title(f"{mode}: text vs audio arrival (playback stall {stall:.2f} s)", fontsize=10)
    axis.grid(axis="x", alpha=0.3)


def _bars(axis: Any, labels: list[str], values: list[float | None], colors: list[str], title: str) -> None:
    heights = [value or 0.0 for value in values]
    bars = axis.bar(labels, heights, color=colors)
    for bar, value in zip(bars, values, strict=True):
        text = "n/a" if value is None else f"{value:.0f}"
        axis.annotate(
            text,
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
            xytext=(0, 2),
            textcoords="offset points",
        )
    axis.set_ylim(0, 1.15 * max([*heights, 1.0]))
    axis.set_title(title, fontsize=10)
    axis.set_ylabel("ms")
    axis.tick_params(axis="x", labelsize=8)
    axis.grid(axis="y", alpha=0.3)


def label_axis(axis: Any, title: str, unit: str = "ms", *, legend: bool = True) -> None:
    """A bar chart's title, its ``unit`` axis, its legend (unless ``legend`` is False) and grid."""
    axis.set_ylabel(unit)
    axis.set_title(title, fontsize=10)
    if legend:
        axis.legend(fontsize=8)
    axis.grid(axis="y", alpha=0.3)


def side_by_side(index: int, count: int) -> tuple[float, float]:
    """The width of each of ``count`` bars sharing a 0.8-wide slot, and the ``index``-th one's offset."""
    width = 0.8 / count
    return width, (index - (count - 1) / 2) * width


def value_bars(
    axis: Any,
    positions: list[float],
    values: list[float],
    width: float,
    fmt: str,
    *,
    label: str,
    color: str,
    va: str = "baseline",
) -> None:
    """Bars of ``width`` at ``positions``, each with its value (``fmt``, aligned ``va``) written over it."""
    bars = axis.bar(positions, values, width, label=label, color=color)
    for bar, value in zip(bars, values, strict=True):
        axis.annotate(
            fmt.format(value), (bar.get_x() + bar.get_width() / 2, value), ha="center", va=va, fontsize=7
        )


_HEARD_BARS = (
    ("short_ttfb_ms", "first byte\n{short} chars"),
    ("short_heard_ms", "first HEARD\n{short} chars"),
    ("long_ttfb_ms", "first byte\n{long} chars"),
    ("long_heard_ms", "first HEARD\n{long} chars"),
    ("sentence_gap_ms", "silence between\n2 sentences"),
)


def _draw_heard(axis: Any, steps: dict[str, dict[str, Any]]) -> None:
    """Grouped bars: first byte vs first heard sound (short, long) and the gap, one colour per step."""
    colors = [_AUDIO_COLOR, _TEXT_COLOR, _PLAY_COLOR, "#7f7f7f"]
    first = next(iter(steps.values()))
    labels = [
        label.format(short=first["short_chars"], long=first["long_chars"]) for _key, label in _HEARD_BARS
    ]
    for index, (name, heard) in enumerate(steps.items()):
        values = [(heard.get(key) or {}).get("median") or 0.0 for key, _label in _HEARD_BARS]
        width, offset = side_by_side(index, len(steps))
        positions = [p + offset for p in range(len(_HEARD_BARS))]
        color = colors[index % len(colors)]
        value_bars(axis, positions, values, width, "{:.0f}", label=name, color=color, va="bottom")
    axis.set_xticks(range(len(_HEARD_BARS)), labels)
    axis.tick_params(axis="x", labelsize=8)
    label_axis(axis, "time to first byte vs first HEARD sound (medians)")


def write_heard_plot(results: dict[str, Any], path: str | Path) -> Path:
    """Write the PNG of ``strands-voice bench --heard`` (before/after per step) to ``path``.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = _import_pyplot()
    figure = plt.figure(figsize=(11, 4.5), layout="constrained")
    _draw_heard(figure.add_subplot(1, 1, 1), results["heard_steps"]["steps"])
    machine = results["machine"]
    title = f"strands-voice bench --heard - {machine.get('cpu_model')}, {machine.get('cpu_cores')} cores"
    return save_figure(plt, figure, title, path)


def save_figure(plt: Any, figure: Any, title: str, path: str | Path) -> Path:
    """Title ``figure``, write it to ``path`` as PNG and free it."""
    figure.suptitle(title, fontsize=11)
    target = Path(path)
    figure.savefig(target, dpi=110)
    plt.close(figure)
    return target


def _draw_concurrency(axis: Any, levels: list[dict[str, Any]]) -> None:
    """p50 and p95 TTFA bars per number of concurrent sessions."""
    positions = list(range(len(levels)))
    width = 0.38
    p50 = [level["p50_ms"] or 0.0 for level in levels]
    p95 = [level["p95_ms"] or 0.0 for level in levels]
    axis.bar([p - width / 2 for p in positions], p50, width, label="p50", color=_TEXT_COLOR)
    axis.bar([p + width / 2 for p in positions], p95, width, label="p95", color=_AUDIO_COLOR)
    axis.set_xticks(positions, [str(level["sessions"]) for level in levels])
    axis.set_xlabel("concurrent sessions")
    label_axis(axis, "endpoint TTFA under concurrency")


def write_plot(results: dict[str, Any], path: str | Path) -> Path:
    """Write the PNG for ``results`` (as returned by ``run_benchmark``) to ``path``.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = _import_pyplot()
    e2e = results["end_to_end"]
    tts = results["tts_only"]
    timelines = e2e["timelines"]
    x_max = 1.05 * max(
        max([row[0] for row in timeline["text"]] + [end for _start, end in timeline["playback"]] + [0.1])
        for timeline in timelines.values()
    )

    heard = results.get("heard")
    figure = plt.figure(figsize=(12, 11.5 if heard else 8.5), layout="constrained")
    grid = figure.add_gridspec(4 if heard else 3, 3, height_ratios=[1, 1, 1.2, 1.2] if heard else [1, 1, 1.2])
    _draw_timeline(figure.add_subplot(grid[0, :]), "bidi", timelines["bidi"], x_max)
    batch_axis = figure.add_subplot(grid[1, :])
    _draw_timeline(batch_axis, "batch", timelines["batch"], x_max)
    batch_axis.set_xlabel("seconds since the request")

    _bars(
        figure.add_subplot(grid[2, 0]),
        ["whole text\n(1 message)", "first sentence"],
        [tts["whole_ttfa_ms"]["median"], tts["first_sentence_ttfa_ms"]["median"]],
        [_AUDIO_COLOR, _TEXT_COLOR],
        f"TTS only TTFA (ratio {tts['ratio_whole_over_first'] or float('nan'):.2f}x)",
    )
    _bars(
        figure.add_subplot(grid[2, 1]),
        ["bidi", "batch"],
        [e2e["bidi_ttfa_ms"]["median"], e2e["batch_ttfa_ms"]["median"]],
        [_PLAY_COLOR, "#7f7f7f"],
        f"end-to-end TTFA (batch/bidi {e2e['ratio_batch_over_bidi'] or float('nan'):.1f}x)",
    )
    _draw_concurrency(figure.add_subplot(grid[2, 2]), list(results["concurrency"]["levels"].values()))

    if heard:
        _draw_heard(figure.add_subplot(grid[3, :]), {"this endpoint": heard})
    machine = results["machine"]
    title = (
        f"strands-voice bench{' (quick)' if results['config'].get('quick') else ''} - "
        f"{machine.get('cpu_model')}, {machine.get('cpu_cores')} cores, engine {machine.get('engine')}"
    )
    return save_figure(plt, figure, title, path)
