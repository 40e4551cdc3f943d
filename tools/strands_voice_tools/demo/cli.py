"""``strands-voice demo``'s options and its run: the figures on stdout, progress on stderr."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from agentcore_app.models import ModelChoice, parse_model_spec
from kokoro_endpoint.reading.languages import READER_EXTRAS, installed_languages
from kokoro_endpoint.voices import voice_language
from strands_voice_protocol.audio import AUDIO_FORMATS
from strands_voice_protocol.errors import MissingDependencyError, StrandsVoiceError

from strands_voice_tools.demo.progress import Progress
from strands_voice_tools.demo.record import build_record, write_record
from strands_voice_tools.demo.report import DemoReport, format_report, report_to_json
from strands_voice_tools.demo.runner import DEFAULT_FOLLOW_UP, DEFAULT_OUT_DIR, DEFAULT_PROMPT, run_demo
from strands_voice_tools.demo.serve import serve
from strands_voice_tools.machine import load_average
from strands_voice_tools.runtime.options import add_runtime_options

__all__ = ["add_arguments", "answer_language", "check_reader", "run"]

DEFAULT_SERVE_PORT: Final = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` options to ``parser``."""
    _add_conversation_arguments(parser)
    _add_output_arguments(parser)
    _add_serve_arguments(parser)


def _add_conversation_arguments(parser: argparse.ArgumentParser) -> None:
    """What is asked, of which model, in which voice and format."""
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, help="what to ask the agent")
    parser.add_argument(
        "--mode",
        choices=("bidi", "batch", "both"),
        default="both",
        help="which mode(s) to run (default: both)",
    )
    parser.add_argument(
        "--voice",
        default=None,
        help="TTS voice id or blend such as jf_alpha(2)+jm_kumo(1) (default: the endpoint's default, "
        "jm_kumo); a Japanese voice (j...) gets the scripted model's Japanese answer",
    )
    parser.add_argument(
        "--format",
        dest="audio_format",
        choices=AUDIO_FORMATS,
        default="pcm16",
        help="audio format streamed by the app (the WAVs are decoded from it; default: pcm16)",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="SPEC",
        help="bedrock:<model-id>, ollama:<name>, openai:<model-id> or scripted "
        "(default: scripted, the offline stand-in)",
    )
    parser.add_argument(
        "--follow-up",
        nargs="?",
        const=DEFAULT_FOLLOW_UP,
        default=None,
        metavar="PROMPT",
        help="then ask PROMPT in the same conversation (AgentCore session) as the first mode, to show "
        f"the agent's memory (default PROMPT: {DEFAULT_FOLLOW_UP!r})",
    )


def _add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the audio and the figures go."""
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT_DIR,
        help=f"where to write <mode>.wav (default: {DEFAULT_OUT_DIR})",
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="also write the figures as JSON"
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="record the figures in docs/demo.json (with date, machine and command) and rewrite the "
        "README's demo block from it; run from the repository's root",
    )


def _add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """``--serve``: the page in a browser instead of a recorded run."""
    serve_help = "start the endpoint and app, print the browser page's URL, serve until Ctrl-C"
    parser.add_argument("--serve", action="store_true", help=serve_help)
    parser.add_argument(
        "--host", default="127.0.0.1", help="interface to serve on with --serve (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_SERVE_PORT,
        help=f"app port with --serve (default: {DEFAULT_SERVE_PORT})",
    )
    parser.add_argument(
        "--tts-port", type=int, default=0, help="TTS endpoint port with --serve (default: any free)"
    )
    runtime = parser.add_argument_group(
        "a deployed runtime", "--serve --runtime-arn ARN: the page here, its calls to the runtime (presigned)"
    )
    add_runtime_options(runtime, arn_help="the deployed runtime the page calls")


def record_command(args: argparse.Namespace) -> str:
    """The command that reproduces this run's figures: ``--record`` plus every option not at its default."""
    words = ["uv", "run", "strands-voice", "demo", "--record"]
    defaults = {
        "prompt": DEFAULT_PROMPT,
        "mode": "both",
        "voice": None,
        "audio_format": "pcm16",
        "model": None,
    }
    flags = {"audio_format": "--format"}
    for name, default in defaults.items():
        value = getattr(args, name)
        if value != default:
            words += [flags.get(name, f"--{name}"), str(value)]
    return shlex.join(words)


def answer_language(spec: str, choice: ModelChoice, voice: str | None) -> str:
    """The scripted model's spec for a Japanese voice (``jf_alpha``): its Japanese answer, unless the spec
    already chose a text or a language. Any other spec is returned as it is."""
    if not choice.is_scripted or voice is None or voice_language(voice) != "j":
        return spec
    if {"text", "lang"} & set(choice.options):
        return spec
    return f"{spec}{'&' if '?' in spec else '?'}lang=ja"


def check_reader(voice: str | None) -> None:
    """Fail before anything starts when the voice's language needs a reader that is not installed.

    Raises:
        MissingDependencyError: the reader is an opt-in extra (Japanese: ``uv sync --group ja``).
    """
    lang = voice_language(voice) if voice else ""
    if lang in READER_EXTRAS and lang not in installed_languages():
        raise MissingDependencyError(f"--voice {voice}: {READER_EXTRAS[lang]}")


def run(args: argparse.Namespace) -> int:
    """Run ``strands-voice demo`` with parsed arguments; returns the exit status.

    Errors are printed as one line on stderr (exit status 1); a mode that produced no audio also fails.
    """
    progress = Progress()
    try:
        if args.runtime_arn is not None:
            return _serve_runtime_page(args)
        spec = _model_spec(args, progress)
        if args.serve:
            return serve(args, spec, progress)
        modes = ("bidi", "batch") if args.mode == "both" else (args.mode,)
        started_at, load_start = datetime.now(UTC), load_average()
        report = run_demo(
            args.prompt,
            modes,
            model_spec=spec,
            voice=args.voice,
            audio_format=args.audio_format,
            out_dir=args.out,
            progress=progress,
            follow_up=args.follow_up,
        )
    except StrandsVoiceError as error:
        print(f"strands-voice demo: error: {error}", file=sys.stderr)
        return 1
    print(format_report(report))
    if not _write_figures(args, report, started_at, load_start, progress):
        return 1
    silent = [r.mode for r in report.results if not report.pcm.get(r.mode)]
    if silent:
        print(
            f"strands-voice demo: error: no audio in {', '.join(silent)} mode (see the error events above)",
            file=sys.stderr,
        )
        return 1
    return 0


def _serve_runtime_page(args: argparse.Namespace) -> int:
    """``--serve --runtime-arn``: no local stack, the page calling the deployed runtime.

    Raises:
        StrandsVoiceError: ``--runtime-arn`` without ``--serve``, or the page cannot be served.
    """
    from strands_voice_tools.runtime.page import serve_page

    if not args.serve:
        raise StrandsVoiceError("--runtime-arn goes with --serve (the page calling the deployed runtime)")
    return serve_page(args)


def _model_spec(args: argparse.Namespace, progress: Progress) -> str:
    """The model spec the run uses, checked, and said on stderr.

    Raises:
        StrandsVoiceError: the spec is not one the app knows.
    """
    # Offline and free unless asked: AWS credentials alone never switch the demo to Bedrock.
    spec = args.model if args.model is not None else "scripted"
    choice = parse_model_spec(spec)  # fail on a typo before loading anything
    spec = answer_language(spec, choice, args.voice)
    check_reader(args.voice)
    if choice.is_scripted:
        progress.note(
            "model: scripted, the built-in offline stand-in LLM (a fixed answer; not a real model; "
            "--model bedrock:<model-id>, ollama:<name> or openai:<model-id> for one)"
        )
    else:
        progress.note(f"model: {choice.description}")
    if choice.is_scripted and (args.serve or args.follow_up is not None):
        # The page and the follow-up are conversations: the stand-in shows it remembers.
        spec += ("&" if "?" in spec else "?") + "remember=1"
    return spec


def _write_figures(
    args: argparse.Namespace,
    report: DemoReport,
    started_at: datetime,
    load_start: list[float] | None,
    progress: Progress,
) -> bool:
    """Write ``--json`` and ``--record`` when asked; False (the error said on stderr) when one cannot be."""
    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report_to_json(report), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"strands-voice demo: error: cannot write {args.json}: {error.strerror}", file=sys.stderr)
            return False
    if args.record:
        try:
            record = build_record(report, record_command(args), started_at=started_at, load_start=load_start)
            path = write_record(record, Path.cwd())
        except (OSError, ValueError) as error:
            print(f"strands-voice demo: error: cannot record the figures: {error}", file=sys.stderr)
            return False
        progress.note(f"recorded {path} and the README's demo block")
    return True
