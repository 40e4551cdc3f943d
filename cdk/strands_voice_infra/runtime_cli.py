"""``agent-infra talk`` and ``agent-infra page``: the deployed runtime, found by name, from a laptop.

The conversation itself is ``strands-voice talk --runtime-arn`` and the page ``strands-voice demo --serve
--runtime-arn`` (the tools package: microphone, speakers, the signed WebSocket, the page server). The
infrastructure package may not import the tools (imports point one way: protocol ← cdk), so these commands
find the runtime ``agent-infra deploy`` made (as ``agent-infra demo`` does), then run that command in this
process's place (``exec``), with ``--profile`` passed on as ``AWS_PROFILE``. ``--print`` prints the command
instead; without ``strands-voice`` on ``PATH`` the command is printed with how to install it.

agent-infra talk [-- --input q.wav --output a.wav]
agent-infra page [--port 8000]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
from collections.abc import Sequence
from typing import Any, TextIO

from . import cli_common as cli
from .config import AGENT_RUNTIME_NAME

__all__ = [
    "RUNTIME_COMMANDS",
    "add_runtime_commands",
    "launch",
    "run_runtime_command",
    "strands_voice_command",
]

RUNTIME_COMMANDS = ("talk", "page")
TOOL = "strands-voice"


def add_runtime_commands(commands: Any) -> None:
    """Add ``talk`` and ``page`` to ``agent-infra``'s subcommands."""
    talk = commands.add_parser(
        "talk",
        help="a spoken conversation with the deployed runtime (runs strands-voice talk --runtime-arn)",
        description="Talk with the deployed agent from this laptop: microphone and speakers, or WAV files "
        "(arguments after -- go to strands-voice talk, e.g. -- --input q.wav --output a.wav).",
    )
    page = commands.add_parser(
        "page",
        help="serve the browser page here, calling the deployed runtime (strands-voice demo --serve)",
        description="Serve the app's page on this machine; its Talk button calls the deployed runtime "
        "through presigned WebSocket URLs.",
    )
    page.add_argument("--port", type=int, default=8000, help="the page's port (default 8000)")
    for sub in (talk, page):
        sub.add_argument("--runtime-arn", help="the runtime's ARN (default: the one agent-infra deployed)")
        sub.add_argument("--qualifier", help="the runtime endpoint (default: DEFAULT)")
        sub.add_argument("--endpoint-url", help="AgentCore's data plane (a stand-in: http://...)")
        sub.add_argument("--print", action="store_true", help="print the command instead of running it")
        cli.add_aws_options(sub)
    talk.add_argument("rest", nargs=argparse.REMAINDER, help="more strands-voice talk options, after --")


def _runtime_arn(args: argparse.Namespace) -> tuple[str, str | None]:
    """The ARN (given, or found by name) and the region to name."""
    if args.runtime_arn:
        return args.runtime_arn, args.region
    from .status import find_runtime

    target = cli.target_from_args(args)
    summary = find_runtime(target, AGENT_RUNTIME_NAME)
    if summary is None:
        raise cli.CliError(
            f"no runtime {AGENT_RUNTIME_NAME} in {target.region}; deploy it (agent-infra deploy)"
        )
    return str(summary["agentRuntimeArn"]), target.region


def strands_voice_command(args: argparse.Namespace, arn: str, region: str | None) -> list[str]:
    """The ``strands-voice`` command line for ``agent-infra talk`` or ``page``."""
    words = [TOOL, "talk"] if args.command == "talk" else [TOOL, "demo", "--serve", "--port", str(args.port)]
    words += ["--runtime-arn", arn]
    named = (("--region", region), ("--qualifier", args.qualifier), ("--endpoint-url", args.endpoint_url))
    for flag, value in named:
        if value:
            words += [flag, value]
    rest = list(getattr(args, "rest", None) or [])
    return words + (rest[1:] if rest[:1] == ["--"] else rest)


def launch(words: Sequence[str], env: dict[str, str]) -> None:  # pragma: no cover - replaces the process
    """Run ``words`` in this process's place."""
    os.execvpe(words[0], list(words), env)


def run_runtime_command(args: argparse.Namespace, stdout: TextIO) -> int:
    """``agent-infra talk`` / ``page``: find the runtime, then run (or print) the ``strands-voice`` command.

    Raises:
        CliError: no runtime found, or ``strands-voice`` is not installed.
    """
    arn, region = _runtime_arn(args)
    words = strands_voice_command(args, arn, region)
    if args.print:
        print(shlex.join(words), file=stdout)
        return 0
    if shutil.which(TOOL) is None:
        raise cli.CliError(
            f"{TOOL} is not installed here (it is the tools package: `uv sync` in the repository); "
            f"the command: {shlex.join(words)}"
        )
    env = dict(os.environ)
    if args.profile:
        env["AWS_PROFILE"] = args.profile
    launch(words, env)
    return 0
