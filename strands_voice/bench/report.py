"""Render benchmark results as the plain-text table printed on stdout."""

from __future__ import annotations

from typing import Any

__all__ = ["format_machine", "format_table"]


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
