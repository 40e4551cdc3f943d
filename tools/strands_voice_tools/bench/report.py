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


def instruction_set_name(machine: dict[str, Any]) -> str:
    """The machine record's instruction set; an emulated one, if the run had it, as
    ``avx2 kernels on avx512_vnni``."""
    isa = machine.get("cpu_isa") or {}
    emulated = (machine.get("kernels") or {}).get("emulated_isa") or isa.get("emulated_isa")
    if not isa.get("isa"):
        return "instruction set not recorded"
    return f"{emulated} kernels on {isa['isa']}" if emulated else str(isa["isa"])


def _isa_note(machine: dict[str, Any]) -> str:
    return f" ({instruction_set_name(machine)})" if (machine.get("cpu_isa") or {}).get("isa") else ""


def format_machine(machine: dict[str, Any]) -> str:
    """One line describing the machine (its instruction set, the engine, the load)."""
    return (
        f"{machine.get('cpu_model')}{_isa_note(machine)}, {machine.get('cpu_cores')} cores, "
        f"{machine.get('ram_gib')} GiB RAM, "
        f"{machine.get('python')}, onnxruntime {machine.get('onnxruntime')}, engine {machine.get('engine')} "
        f"(voice {machine.get('voice')}), load average {machine.get('load_average_start')} -> "
        f"{machine.get('load_average_end')}"
    )


def heard_rows(
    results: dict[str, Any], verdict: Callable[[str], str] | None = None
) -> list[tuple[str, str, str, str]]:
    """Rows for the time to first heard sound: next to time to first byte, where measured."""

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
        (
            section,
            f"first HEARD sound, {short}-char, right after a cancel",
            _ms(heard.get("short_after_cancel_heard_ms")),
            "",
        ),
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
        (section, "two sentences: first HEARD sound", _ms(heard.get("two_sentences_heard_ms")), ""),
        (section, "two sentences: player waits (stall)", _ms(heard.get("two_sentences_stall_ms")), ""),
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


Row = tuple[str, str, str, str]
Verdict = Callable[[str], str]

_TTS_TARGET = "tts_only_ratio_whole_over_first"

#: End-to-end rows that carry no target: (label, key in the ``end_to_end`` section).
_E2E_FLOOR_ROWS: tuple[tuple[str, str], ...] = (
    ("  text complete -> engine starts (client)", "bidi_text_complete_to_engine_start_ms"),
    ("  engine done -> audio at the client", "bidi_engine_done_to_client_audio_ms"),
    ("engine in-process, first chunk, alone (idle)", "engine_first_segment_ms"),
    ("bidi overhead over the idle-engine floor", "bidi_overhead_over_idle_floor_ms"),
)


def _tts_rows(tts: dict[str, Any], verdict: Verdict) -> list[Row]:
    """Section 1: the whole text against its first sentence."""
    ratio = _num(tts["ratio_whole_over_first"], ".2f", "x")
    whole = f"TTFA whole text ({tts['text_chars']} chars, 1 message)"
    return [
        ("TTS only", whole, _ms(tts["whole_ttfa_ms"]), ""),
        (
            "TTS only",
            f"TTFA first sentence only ({tts['first_sentence_chars']} chars)",
            _ms(tts["first_sentence_ttfa_ms"]),
            "",
        ),
        ("TTS only", "ratio whole / first sentence (blog: 2.1x)", ratio, verdict(_TTS_TARGET)),
    ]


def _end_to_end_rows(e2e: dict[str, Any], verdict: Verdict) -> list[Row]:
    """Section 2: bidi against batch, and bidi's overhead over the floor."""
    section = "End to end"
    ratio = _num(e2e["ratio_batch_over_bidi"], ".2f", "x")
    rows: list[Row] = [
        (section, "TTFA bidi (client, over SSE)", _ms(e2e["bidi_ttfa_ms"]), ""),
        (section, "TTFA batch (client, over SSE)", _ms(e2e["batch_ttfa_ms"]), ""),
        (section, "ratio batch / bidi (blog: 2.4x)", ratio, verdict("e2e_ttfa_ratio_batch_over_bidi")),
        (section, "first chunk's text complete (server t_ms)", _ms(e2e["first_chunk_text_complete_ms"]), ""),
        (
            section,
            "engine in-process, first chunk, in the trial",
            _ms(e2e.get("engine_first_segment_in_trial_ms")),
            "",
        ),
        (
            section,
            "bidi overhead over the floor",
            _ms(e2e["bidi_overhead_over_floor_ms"]),
            verdict("bidi_overhead_over_floor_ms"),
        ),
    ]
    rows.extend((section, label, _ms(e2e.get(key)), "") for label, key in _E2E_FLOOR_ROWS)
    return rows


def _playback_rows(playback: dict[str, Any], verdict: Verdict) -> list[Row]:
    """Section 3: the worst and the median stall of each mode."""
    rows: list[Row] = []
    for mode, target in (("bidi", verdict("bidi_playback_stall_s")), ("batch", "")):
        stall = playback[f"{mode}_stall_s"]
        label = f"stall {mode}, worst of {stall['n']} (median)"
        rows.append(("Playback", label, f"{stall['max']:.3f} s ({stall['median']:.3f})", target))
    return rows


def _payload_rows(payload: dict[str, Any], verdict: Verdict) -> list[Row]:
    """Section 4: Leg 3 bytes per audio second, each format against raw pcm16."""
    rows: list[Row] = [("Payload", "raw pcm16 (reference)", f"{payload['raw_pcm_bytes_per_s']:,} B/s", "")]
    for name, figures in payload["formats"].items():
        value = f"{figures['bytes_per_audio_s']:,.0f} B/s ({figures['ratio_to_raw_pcm']:.2f}x raw)"
        rows.append(("Payload", f"{name} (base64 in JSON) per audio second", value, ""))
    share = payload["opus_share_of_pcm16"]
    value = _num(None if share is None else share * 100, ".1f", "%")
    rows.append(("Payload", "opus / base64 pcm16", value, verdict("opus_share_of_pcm16")))
    return rows


def _concurrency_rows(concurrency: dict[str, Any]) -> list[Row]:
    """Section 5: p50 / p95 TTFA per number of concurrent sessions."""
    rows: list[Row] = []
    for level in concurrency["levels"].values():
        value = f"{_num(level['p50_ms'], '.0f')} / {_num(level['p95_ms'], '.0f')} ms"
        if level["error"]:
            value += f" ({level['error']})"
        label = f"{level['sessions']} sessions: TTFA p50 / p95 (n={level['samples']})"
        rows.append(("Concurrency", label, value, ""))
    return rows


def format_table(results: dict[str, Any]) -> str:
    """The figures as an aligned table, each target marked where it landed."""
    targets = {target["name"]: target for target in results["targets"]}

    def verdict(name: str) -> str:
        target = targets[name]
        if target.get("note"):
            return f"{target['target']:<8} no verdict: {target['note']}"
        return f"{target['target']:<8} {'met' if target['met'] else 'MISSED'}"

    rows = [
        *_tts_rows(results["tts_only"], verdict),
        *_end_to_end_rows(results["end_to_end"], verdict),
        *_playback_rows(results["playback"], verdict),
        *_payload_rows(results["payload"], verdict),
        *_concurrency_rows(results["concurrency"]),
        *heard_rows(results, verdict),
    ]
    header = ("section", "figure", "median", "target")
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(3)]
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
