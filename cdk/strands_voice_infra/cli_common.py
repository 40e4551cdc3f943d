"""What ``speech-infra`` and ``agent-infra`` share: options, one-line errors, and the deploy/destroy flow."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from botocore.exceptions import BotoCoreError, ClientError

from .aws import AwsTarget, CredentialsError, resolve_target, stack_exists
from .config import REPO_ROOT, InfraConfig
from .stack_names import CDK_TOOLKIT

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "CliError",
    "add_aws_options",
    "add_output_options",
    "add_version_option",
    "configure_logging",
    "default_outdir",
    "deploy_stacks",
    "print_json",
    "print_node_hint",
    "run_cli",
    "run_toolkit",
    "synth_stacks",
    "target_from_args",
]

logger = logging.getLogger(__name__)

EXIT_FAILURE = 1
EXIT_USAGE = 2


class CliError(Exception):
    """Ends the command with one line on stderr and an exit code (2: bad usage, 1: anything else)."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        """Keep the message and exit code.

        Args:
            message: One line for the user.
            code: The exit code.
        """
        super().__init__(message)
        self.code = code

    def exit(self, prog: str, err: TextIO | None = None) -> NoReturn:
        """Print ``<prog>: error: <message>`` and exit."""
        print(f"{prog}: error: {self}", file=err or sys.stderr)
        raise SystemExit(self.code)


def configure_logging(verbose: bool) -> None:
    """Debug logs of this package on stderr with ``-v``; warnings only otherwise."""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not verbose:
        logging.getLogger("strands_voice_infra").setLevel(logging.WARNING)


def add_version_option(parser: argparse.ArgumentParser) -> None:
    """``--version``: the program name and this package's version."""
    from importlib.metadata import version

    parser.add_argument("--version", action="version", version=f"%(prog)s {version('strands-voice-infra')}")


def add_aws_options(parser: argparse.ArgumentParser) -> None:
    """``--profile`` and ``--region``."""
    parser.add_argument("--profile", help="AWS named profile (default: the standard credential chain)")
    parser.add_argument(
        "--region", help="AWS region (default: AWS_REGION, then AWS_DEFAULT_REGION, then the profile's)"
    )


def add_output_options(parser: argparse.ArgumentParser, kind: str) -> None:
    """``--out`` (the cloud assembly directory) and ``--repo-root`` (the Docker build context)."""
    parser.add_argument(
        "--out", type=Path, default=None, help=f"cloud assembly directory (default: {default_outdir(kind)})"
    )
    parser.add_argument(
        "--repo-root",
        type=Path,
        default=None,
        help="Docker build context of the images (default: this checkout)",
    )


def default_outdir(kind: str) -> Path:
    """``cdk/cdk.out/<kind>`` of this checkout: one assembly per CLI, so neither overwrites the other's."""
    return REPO_ROOT / "cdk" / "cdk.out" / kind


def print_json(data: Any, out: TextIO | None = None) -> None:
    """Pretty JSON on stdout."""
    print(json.dumps(data, indent=2, default=str), file=out or sys.stdout)


def print_node_hint() -> None:
    """Print one line on stderr when Node.js is missing or end-of-life (jsii and the CDK CLI need it)."""
    from .toolkit import node_hint

    hint = node_hint()
    if hint:
        print(hint, file=sys.stderr)


def run_toolkit(command: Sequence[str], *, region: str, out: TextIO | None = None) -> int:
    """Run a CDK CLI command in the target region, streaming its output.

    Args:
        command: The argument vector (``toolkit.deploy_command`` and friends).
        region: Exported as ``AWS_REGION``/``AWS_DEFAULT_REGION`` so the CLI acts where the checks did.
        out: Where to stream (stdout by default).

    Returns:
        The CLI's exit code.

    Raises:
        CliError: the CLI could not be started.
    """
    from .toolkit import ToolkitError, run_streaming

    env = {**os.environ, "AWS_REGION": region, "AWS_DEFAULT_REGION": region}
    try:
        return run_streaming(command, out=out, env=env)
    except ToolkitError as exc:
        raise CliError(str(exc)) from None


def target_from_args(args: argparse.Namespace) -> AwsTarget:
    """The account and region ``--profile``/``--region`` resolve to.

    Raises:
        CliError: no credentials or no region.
    """
    try:
        return resolve_target(args.profile, args.region)
    except CredentialsError as exc:
        raise CliError(str(exc)) from None


def synth_stacks(config: InfraConfig, out: Path | None, kind: str, stdout: TextIO) -> Path:
    """Synthesize one CLI's stacks (``kind``: ``speech`` or ``agent``), list them, return the assembly.

    Raises:
        CliError: the synthesis failed.
    """
    from .toolkit import SynthError, synth

    try:
        result = synth(config, out or default_outdir(kind), speech=kind == "speech", agent=kind == "agent")
    except SynthError as exc:
        raise CliError(str(exc)) from None
    for name, template in result.templates.items():
        print(f"{name}: {template}", file=stdout)
    print(f"synthesized {len(result.templates)} stacks in {result.seconds:.1f} s", file=stdout)
    return result.assembly_dir


def deploy_stacks(target: AwsTarget, assembly: Path, stacks: Sequence[str], stdout: TextIO) -> int:
    """Bootstrap the CDK in the target once per account and region, then deploy ``stacks``.

    Returns:
        The CDK CLI's exit code (the bootstrap's, if that failed).
    """
    from .toolkit import bootstrap_command, deploy_command

    if not stack_exists(target, CDK_TOOLKIT):
        print(
            f"bootstrapping the CDK in aws://{target.account}/{target.region} (once per account and region)",
            file=stdout,
        )
        code = run_toolkit(
            bootstrap_command(assembly, target.account, target.region, profile=target.profile),
            region=target.region,
            out=stdout,
        )
        if code != 0:
            return code
    return run_toolkit(
        deploy_command(assembly, list(stacks), profile=target.profile), region=target.region, out=stdout
    )


def run_cli(prog: str, command: Callable[[], int]) -> int:
    """Run one CLI command: a :class:`CliError` or an AWS error ends it with one line and its exit code."""
    try:
        return command()
    except CliError as exc:
        exc.exit(prog)
    except (BotoCoreError, ClientError) as exc:
        CliError(f"AWS call failed: {exc}").exit(prog)
