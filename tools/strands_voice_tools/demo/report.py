"""The demo's outcome as text and JSON: a :class:`~strands_voice_protocol.leg3_client.ModeResult` per mode."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcore_app.models import ModelChoice
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.leg3_client import ModeResult

__all__ = ["DemoReport", "format_ratio", "format_report", "format_table", "report_to_json"]


@dataclass
class DemoReport:
    """The demo's outcome.

    Attributes:
        prompt: The prompt sent.
        model: The model that answered.
        voice: The TTS voice.
        results: One result per mode, in the order run (client times in seconds).
        pcm: Each mode's audio, decoded to 16-bit PCM at 24 kHz.
        wavs: Where each mode's WAV was written.
        follow_up_prompt: The follow-up question asked in the first mode's conversation, if any.
        follow_up: Its answer.
    """

    prompt: str
    model: ModelChoice
    voice: str
    results: list[ModeResult]
    pcm: dict[str, bytes] = field(default_factory=dict, repr=False)
    wavs: dict[str, Path] = field(default_factory=dict)
    follow_up_prompt: str | None = None
    follow_up: ModeResult | None = None

    def audio_s(self, mode: str) -> float:
        """Seconds of audio ``mode`` received."""
        return len(self.pcm.get(mode, b"")) / BYTES_PER_SECOND

    def result(self, mode: str) -> ModeResult | None:
        """The result of ``mode``, if it ran."""
        return next((r for r in self.results if r.mode == mode), None)

    @property
    def ttfa_ratio(self) -> float | None:
        """Batch time to first audio divided by bidi's, when both ran and both spoke."""
        bidi, batch = self.result("bidi"), self.result("batch")
        if bidi is None or batch is None or not bidi.first_audio_s or batch.first_audio_s is None:
            return None
        return batch.first_audio_s / bidi.first_audio_s


def _answer_text(result: ModeResult) -> str:
    return "".join(arrival.text for arrival in result.texts).strip()


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def format_table(modes: list[dict[str, Any]]) -> list[str]:
    """The per-mode table's lines from :func:`report_to_json`'s ``modes``: the terminal's and the README's."""
    lines = [
        f"{'mode':<6} {'first text':>11} {'first audio':>12} {'first heard':>12} {'last audio':>11} "
        f"{'audio':>9}  wav"
    ]
    for m in modes:
        lines.append(
            f"{m['mode']:<6} {_seconds(m['first_text_s']):>11} {_seconds(m['first_audio_s']):>12} "
            f"{_seconds(m['first_heard_s']):>12} {_seconds(m['last_audio_s']):>11} "
            f"{_seconds(m['audio_s']):>9}  {m['wav'] or '(none)'}"
        )
    return lines


def format_ratio(bidi: dict[str, Any] | None, batch: dict[str, Any] | None) -> str | None:
    """The batch/bidi time-to-first-audio line, when both modes ran and spoke."""
    if bidi is None or batch is None or not bidi["first_audio_s"] or batch["first_audio_s"] is None:
        return None
    ratio = batch["first_audio_s"] / bidi["first_audio_s"]
    sooner = batch["first_audio_s"] - bidi["first_audio_s"]
    return f"time to first audio, batch / bidi: {ratio:.1f}x (bidi starts speaking {sooner:.2f} s sooner)"


def format_report(report: DemoReport) -> str:
    """The figures as a small table, for people."""
    modes = report_to_json(report)["modes"]
    lines = [
        f"model:  {report.model.description}",
        f"voice:  {report.voice} (Kokoro-82M int8 ONNX on CPU)",
        f"prompt: {report.prompt}",
        "",
        *format_table(list(modes.values())),
        "",
    ]
    ratio = format_ratio(modes.get("bidi"), modes.get("batch"))
    if ratio is not None:
        lines.append(ratio)
    lines.append(
        "times are measured at the client, from sending the request; first text is the first text_delta; "
        "first heard is when the first 10 ms above -40 dBFS plays, on a player starting at the first audio"
    )
    follow_up = report.follow_up
    if follow_up is not None:
        answer = _answer_text(follow_up)
        lines.append(f"follow-up in the same conversation: {report.follow_up_prompt}")
        lines.append(f"  answer ({_seconds(follow_up.first_audio_s)} to first audio): {answer[:200]}")
    for r in [*report.results, *([follow_up] if follow_up is not None else [])]:
        for error in r.error_lines:
            lines.append(f"{r.mode}: error {error}")
    if report.model.is_scripted:
        lines.append(
            "note: the answer came from the scripted stand-in, not a real LLM "
            "(use --model bedrock:<model-id>, ollama:<name> or openai:<model-id> for one)"
        )
    return "\n".join(lines)


def report_to_json(report: DemoReport) -> dict[str, Any]:
    """The figures as a JSON-ready dict: per mode :meth:`ModeResult.figures` (seconds), audio and WAV."""
    ratio = report.ttfa_ratio
    return {
        "prompt": report.prompt,
        "model": {
            "spec": report.model.spec,
            "scripted": report.model.is_scripted,
        },
        "voice": report.voice,
        "modes": {
            r.mode: {
                **r.figures(),
                "audio_s": round(report.audio_s(r.mode), 4),
                "wav": str(report.wavs[r.mode]) if r.mode in report.wavs else None,
            }
            for r in report.results
        },
        "ttfa_ratio_batch_over_bidi": None if ratio is None else round(ratio, 4),
        "follow_up": None
        if report.follow_up is None
        else {
            "prompt": report.follow_up_prompt,
            "text": _answer_text(report.follow_up),
            **report.follow_up.figures(),
        },
    }
