"""Render benchmark results as the plain-text table printed on stdout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["format_heard_steps", "format_machine", "format_table", "heard_rows"]


def _ms(figure: dict[str, Any] | None) -> str:
    if figure is None:
        return "n/a"
    return f"{figure['median']:.0f} ms"


def _num(value: float | None, fmt: str, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:{fmt}}{suffix}"


def format_machine(machine: dict[str, Any]) -> str:
    """One line describing the machine."""
    return (
        f"{machine.get('cpu_model')}, {machine.get('cpu_cores')} cores, {machine.get('ram_gib')} GiB RAM, "
        f"{machine.get('python')}, onnxruntime {machine.get('onnxruntime')}, engine {machine.get('engine')} "
        f"(voice {machine.get('voice')}), load average {machine.get('load_average_start')} -> "
        f"{machine.get('load_average_end')}"
    )


def heard_rows(
    results: dict[str, Any], verdict: Callable[[str], str] | None = None
) -> list[tuple[str, str, str, str]]:
    """Rows for the time to first heard sound (issue 15): next to time to first byte, where measured."""

    def mark(name: str) -> str:
        if verdict is None or not any(t["name"] == name for t in results.get("targets", [])):
            return ""
        return verdict(name)

    rows: list[tuple[str, str, str, str]] = []
    tts = results.get("tts_only", {})
    if tts.get("whole_heard_ms"):
        rows.append(("TTS only", "first HEARD sound, whole text", _ms(tts["whole_heard_ms"]), ""))
        rows.append(
            ("TTS only", "first HEARD sound, first sentence", _ms(tts["first_sentence_heard_ms"]), "")
        )
    e2e = results.get("end_to_end", {})
    if e2e.get("bidi_heard_ms"):
        rows.append(("End to end", "first HEARD sound bidi (client)", _ms(e2e["bidi_heard_ms"]), ""))
        rows.append(("End to end", "first HEARD sound batch (client)", _ms(e2e.get("batch_heard_ms")), ""))
        rows.append(
            (
                "End to end",
                "bidi heard over text complete + engine's first window",
                _ms(e2e.get("bidi_heard_over_floor_ms")),
                mark("bidi_heard_over_floor_ms"),
            )
        )
    heard = results.get("heard")
    if heard:
        rows.extend(_heard_section_rows("Heard", heard, mark))
    return rows


def _heard_section_rows(
    section: str, heard: dict[str, Any], mark: Callable[[str], str]
) -> list[tuple[str, str, str, str]]:
    short, long = heard["short_chars"], heard["long_chars"]
    return [
        (section, f"first byte, {short}-char sentence", _ms(heard["short_ttfb_ms"]), ""),
        (section, f"first HEARD sound, {short}-char sentence", _ms(heard["short_heard_ms"]), ""),
        (section, f"first byte, {long}-char unpunctuated", _ms(heard["long_ttfb_ms"]), ""),
        (section, f"first HEARD sound, {long}-char unpunctuated", _ms(heard["long_heard_ms"]), ""),
        (
            section,
            f"heard ratio {long} / {short} chars",
            _num(heard["ratio_long_over_short_heard"], ".2f", "x"),
            mark("heard_ratio_long_over_short"),
        ),
        (
            section,
            "silence before the first sound",
            _ms(heard["lead_silence_ms"]),
            mark("heard_lead_silence_ms"),
        ),
        (
            section,
            "silence heard between two sentences",
            _ms(heard["sentence_gap_ms"]),
            mark("heard_sentence_gap_ms"),
        ),
    ]


def format_heard_steps(results: dict[str, Any]) -> str:
    """The before/after table of ``strands-voice bench --heard`` (one column per step)."""
    steps = results["heard_steps"]["steps"]
    names = list(steps)
    table: list[list[str]] = [["figure", *names]]
    for index, first in enumerate(_heard_section_rows("", steps[names[0]], lambda _name: "")):
        label = first[1]
        values = [_heard_section_rows("", steps[name], lambda _name: "")[index][2] for name in names]
        table.append([label, *values])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [f"strands-voice bench --heard: {format_machine(results['machine'])}"]
    for row_index, cells in enumerate(table):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(cells)))
        if row_index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def format_table(results: dict[str, Any]) -> str:
    """The figures as an aligned table, each target marked where it landed."""
    tts = results["tts_only"]
    e2e = results["end_to_end"]
    playback = results["playback"]
    payload = results["payload"]
    targets = {target["name"]: target for target in results["targets"]}

    def verdict(name: str) -> str:
        target = targets[name]
        if target.get("note"):
            return f"{target['target']:<8} no verdict: {target['note']}"
        return f"{target['target']:<8} {'met' if target['met'] else 'MISSED'}"

    rows: list[tuple[str, str, str, str]] = [
        (
            "TTS only",
            f"TTFA whole text ({tts['text_chars']} chars, 1 message)",
            _ms(tts["whole_ttfa_ms"]),
            "",
        ),
        (
            "TTS only",
            f"TTFA first sentence only ({tts['first_sentence_chars']} chars)",
            _ms(tts["first_sentence_ttfa_ms"]),
            "",
        ),
        (
            "TTS only",
            "ratio whole / first sentence (blog: 2.1x)",
            _num(tts["ratio_whole_over_first"], ".2f", "x"),
            verdict("tts_only_ratio_whole_over_first"),
        ),
        ("End to end", "TTFA bidi (client, over SSE)", _ms(e2e["bidi_ttfa_ms"]), ""),
        ("End to end", "TTFA batch (client, over SSE)", _ms(e2e["batch_ttfa_ms"]), ""),
        (
            "End to end",
            "ratio batch / bidi (blog: 2.4x)",
            _num(e2e["ratio_batch_over_bidi"], ".2f", "x"),
            verdict("e2e_ttfa_ratio_batch_over_bidi"),
        ),
        (
            "End to end",
            "first chunk's text complete (server t_ms)",
            _ms(e2e["first_chunk_text_complete_ms"]),
            "",
        ),
        (
            "End to end",
            "engine in-process, first chunk, in the trial",
            _ms(e2e.get("engine_first_segment_in_trial_ms")),
            "",
        ),
        (
            "End to end",
            "bidi overhead over the floor",
            _ms(e2e["bidi_overhead_over_floor_ms"]),
            verdict("bidi_overhead_over_floor_ms"),
        ),
        (
            "End to end",
            "  text complete -> engine starts (client)",
            _ms(e2e.get("bidi_text_complete_to_engine_start_ms")),
            "",
        ),
        (
            "End to end",
            "  engine done -> audio at the client",
            _ms(e2e.get("bidi_engine_done_to_client_audio_ms")),
            "",
        ),
        (
            "End to end",
            "engine in-process, first chunk, alone (idle)",
            _ms(e2e["engine_first_segment_ms"]),
            "",
        ),
        (
            "End to end",
            "bidi overhead over the idle-engine floor",
            _ms(e2e.get("bidi_overhead_over_idle_floor_ms")),
            "",
        ),
        (
            "Playback",
            f"stall bidi, worst of {playback['bidi_stall_s']['n']} (median)",
            f"{playback['bidi_stall_s']['max']:.3f} s ({playback['bidi_stall_s']['median']:.3f})",
            verdict("bidi_playback_stall_s"),
        ),
        (
            "Playback",
            f"stall batch, worst of {playback['batch_stall_s']['n']} (median)",
            f"{playback['batch_stall_s']['max']:.3f} s ({playback['batch_stall_s']['median']:.3f})",
            "",
        ),
    ]
    raw = payload["raw_pcm_bytes_per_s"]
    rows.append(("Payload", "raw pcm16 (reference)", f"{raw:,} B/s", ""))
    for name, figures in payload["formats"].items():
        label = "pcm16 (base64 in JSON)" if name == "pcm16" else f"{name} (base64 in JSON)"
        rows.append(
            (
                "Payload",
                f"{label} per audio second",
                f"{figures['bytes_per_audio_s']:,.0f} B/s ({figures['ratio_to_raw_pcm']:.2f}x raw)",
                "",
            )
        )
    rows.append(
        (
            "Payload",
            "opus / base64 pcm16",
            _num(
                None if payload["opus_share_of_pcm16"] is None else payload["opus_share_of_pcm16"] * 100,
                ".1f",
                "%",
            ),
            verdict("opus_share_of_pcm16"),
        )
    )
    for level in results["concurrency"]["levels"].values():
        value = f"{_num(level['p50_ms'], '.0f')} / {_num(level['p95_ms'], '.0f')} ms"
        if level["error"]:
            value += f" ({level['error']})"
        rows.append(
            ("Concurrency", f"{level['sessions']} sessions: TTFA p50 / p95 (n={level['samples']})", value, "")
        )

    rows.extend(heard_rows(results, verdict))

    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    header = ("section", "figure", "median", "target")
    widths = [max(widths[i], len(header[i])) for i in range(3)]
    lines = [
        f"strands-voice bench{' (quick)' if results['config'].get('quick') else ''}: "
        f"{format_machine(results['machine'])}",
        "  ".join(header[i].ljust(widths[i]) for i in range(3)) + "  " + header[3],
        "  ".join("-" * widths[i] for i in range(3)) + "  " + "-" * 14,
    ]
    for row in rows:
        lines.append("  ".join(row[i].ljust(widths[i]) for i in range(3)) + "  " + row[3])
    met = sum(1 for target in results["targets"] if target["met"])
    lines.append(f"targets met: {met}/{len(results['targets'])}; ran {results.get('duration_s')} s")
    return "\n".join(lines)
