"""``strands-voice demo``'s options and its run: the figures on stdout, progress on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Final

from agentcore_app.models import parse_model_spec
from strands_voice_protocol.errors import StrandsVoiceError

from strands_voice_tools.demo.progress import Progress
from strands_voice_tools.demo.report import format_report, report_to_json
from strands_voice_tools.demo.runner import DEFAULT_FOLLOW_UP, DEFAULT_OUT_DIR, DEFAULT_PROMPT, run_demo
from strands_voice_tools.demo.serve import serve

__all__ = ["add_arguments", "run"]

DEFAULT_SERVE_PORT: Final = 8000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``demo`` options to ``parser``."""
    parser.add_argument("--prompt", default=DEFAULT_PROMPT, help="what to ask the agent")
    parser.add_argument(
        "--mode",
        choices=("bidi", "batch", "both"),
        default="both",
        help="which mode(s) to run (default: both)",
    )
    parser.add_argument(
        "--voice", default=None, help="TTS voice id (default: the endpoint's default, jm_kumo)"
    )
    parser.add_argument(
        "--format",
        dest="audio_format",
        choices=("pcm16", "wav", "mp3", "opus", "aac"),
        default="pcm16",
        help="audio format streamed by the app (the WAVs are decoded from it; default: pcm16)",
    )
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
    parser.add_argument(
        "--serve",
        action="store_true",
        help="start the endpoint and app, print the browser page's URL, serve until Ctrl-C",
    )
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


def run(args: argparse.Namespace) -> int:
    """Run ``strands-voice demo`` with parsed arguments; returns the exit status.

    Errors are printed as one line on stderr (exit status 1); a mode that produced no audio also fails.
    """
    progress = Progress()
    try:
        # Offline and free unless asked: AWS credentials alone never switch the demo to Bedrock.
        spec = args.model if args.model is not None else "scripted"
        choice = parse_model_spec(spec)  # fail on a typo before loading anything
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
        if args.serve:
            return serve(args, spec, progress)
        modes = ("bidi", "batch") if args.mode == "both" else (args.mode,)
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
    if args.json is not None:
        try:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report_to_json(report), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            print(f"strands-voice demo: error: cannot write {args.json}: {error.strerror}", file=sys.stderr)
            return 1
    silent = [r.mode for r in report.results if not report.pcm.get(r.mode)]
    if silent:
        print(
            f"strands-voice demo: error: no audio in {', '.join(silent)} mode (see the error events above)",
            file=sys.stderr,
        )
        return 1
    return 0
