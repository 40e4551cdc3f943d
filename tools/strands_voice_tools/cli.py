"""The ``strands-voice`` command: ``demo`` (the main job), ``bench``, ``talk`` and ``phone-bridge``.

Errors are one line on stderr, ``strands-voice: error: <message>`` (argparse's own usage errors, and
``speech-infra``, ``agent-infra`` and ``kokoro-endpoint``, use the same form), exit status 1 (2: usage).
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from importlib.metadata import version
from typing import Protocol, cast

from strands_voice_protocol.errors import StrandsVoiceError

__all__ = ["PROG", "build_parser", "main"]

PROG = "strands-voice"

# Subcommand name -> (module that implements it, one-line help). Modules load lazily so that
# `strands-voice --help` stays instant and a missing optional part only fails its own command.
_COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "strands_voice_tools.demo",
        "speak one answer in bidi and batch mode and compare time to first audio",
    ),
    "bench": ("strands_voice_tools.bench", "measure time to first audio and friends, side by side"),
    "talk": (
        "strands_voice_tools.talk",
        "a spoken conversation with an agent (microphone and speakers, or --input/--output WAV files)",
    ),
    "phone-bridge": (
        "strands_voice_tools.phone_bridge",
        "carry Twilio Media Streams calls to a deployed AgentCore runtime's /ws, signed",
    ),
}


class _Command(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> _Command:
    return cast(_Command, importlib.import_module(_COMMANDS[name][0]))


def _add_region(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--region",
        default=None,
        help="AWS region of AWS models and endpoints (sets AWS_REGION for this run; default: AWS_REGION, "
        "then AWS_DEFAULT_REGION, then the profile's)",
    )


def _error(message: object) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Build the argument parser; only the chosen subcommand's module is imported."""
    parser = argparse.ArgumentParser(prog=PROG, description="Low-latency voice for Strands agents.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('strands-voice')}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    subparsers = parser.add_subparsers(dest="command", metavar="{" + ",".join(_COMMANDS) + "}")
    chosen = next((arg for arg in (argv or []) if arg in _COMMANDS), None)
    for name, (_module, help_text) in _COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        _add_region(sub)
        if name == chosen:
            _load(name).add_arguments(sub)
    return parser


def _stacks_on_signal() -> None:
    """`kill -USR1 <pid>` prints every thread's stack to the process's stderr: how a hung conversation is
    read. Where there is no such signal or no real stderr (Windows, a host that replaced it), nothing."""
    user_signal = getattr(signal, "SIGUSR1", None)
    if user_signal is None or sys.__stderr__ is None:
        return
    try:
        faulthandler.register(user_signal, file=sys.__stderr__, all_threads=True)
    except (OSError, ValueError):  # a stderr without a file descriptor
        logging.getLogger(__name__).debug("no thread stacks on SIGUSR1: stderr has no file descriptor")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``strands-voice`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(args_list)
    except ImportError as error:
        _error(error)
        return 2
    args = parser.parse_args(args_list)
    _stacks_on_signal()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.command is None:
        parser.print_help()
        return 2
    if args.region:
        # What the library, boto3 and Strands' BedrockModel read first (AWS_REGION over AWS_DEFAULT_REGION).
        os.environ["AWS_REGION"] = args.region
    try:
        return _load(args.command).run(args)
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except StrandsVoiceError as error:
        _error(error)
        return 1


if __name__ == "__main__":
    sys.exit(main())
