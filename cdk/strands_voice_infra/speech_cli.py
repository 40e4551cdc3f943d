"""``speech-infra``: deploy, destroy, synthesize and inspect a speech model's SageMaker endpoint.

speech-infra deploy kokoro-82m [--instance-type ml.g5.xlarge] [--min-instances 1] [--max-instances 2]
speech-infra status kokoro-82m
speech-infra synth kokoro-82m [--out DIR]
speech-infra destroy kokoro-82m
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from . import cli_common as cli
from .aws import stack_exists
from .config import ConfigError, InfraConfig
from .models import MODELS, ModelSpec, UnknownModelError, get_model
from .stack_names import AGENT_RUNTIME, speech_stack_names

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)

PROG = "speech-infra"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``deploy``, ``destroy``, ``synth``, ``status``)."""
    parser = argparse.ArgumentParser(prog=PROG, description="Deploy a strands-voice TTS model on SageMaker.")
    cli.add_version_option(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    helps = {
        "deploy": "build and deploy the model's endpoint (and the shared bucket and roles)",
        "destroy": "delete the endpoint stacks (the weights bucket is retained)",
        "synth": "write the CloudFormation templates, offline",
        "status": "describe the deployed endpoint",
    }
    for name, text in helps.items():
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("model", help=f"model name ({', '.join(MODELS)})")
        if name in {"deploy", "synth"}:
            sub.add_argument("--instance-type", help="SageMaker instance type (default: ml.g5.xlarge)")
            sub.add_argument(
                "--min-instances", type=int, help="autoscaling floor and initial count (default: 1)"
            )
            sub.add_argument("--max-instances", type=int, help="autoscaling ceiling (default: 2)")
            sub.add_argument(
                "--target-concurrency",
                type=float,
                help="concurrent requests per instance to scale at (default: 4)",
            )
        if name != "status":
            cli.add_output_options(sub, "speech")
        if name != "synth":
            cli.add_aws_options(sub)
        if name == "status":
            sub.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _config(spec: ModelSpec, args: argparse.Namespace) -> InfraConfig:
    try:
        return InfraConfig(speech_model=spec).with_overrides(
            instance_type=getattr(args, "instance_type", None),
            min_instances=getattr(args, "min_instances", None),
            max_instances=getattr(args, "max_instances", None),
            target_concurrency=getattr(args, "target_concurrency", None),
            repo_root=getattr(args, "repo_root", None),
        )
    except ConfigError as exc:
        raise cli.CliError(str(exc), cli.EXIT_USAGE) from None


def _deploy(spec: ModelSpec, args: argparse.Namespace, stdout: TextIO) -> int:
    config = _config(spec, args)
    target = cli.target_from_args(args)
    print(f"deploying {spec.name} to account {target.account}, region {target.region}", file=stdout)
    assembly = cli.synth_stacks(config, args.out, "speech", stdout)
    code = cli.deploy_stacks(target, assembly, speech_stack_names(spec), stdout)
    if code == 0:
        print(
            f"endpoint {spec.endpoint_name} is in service; check it with: {PROG} status {spec.name}",
            file=stdout,
        )
    return code


def _destroy(spec: ModelSpec, args: argparse.Namespace, stdout: TextIO) -> int:
    from .toolkit import destroy_command

    config = _config(spec, args)
    target = cli.target_from_args(args)
    others = [m.name for m in MODELS.values() if m.name != spec.name and stack_exists(target, m.stack_name)]
    stacks = list(reversed(speech_stack_names(spec)))
    if others:
        stacks = [spec.stack_name]
        print(f"keeping the shared speech stacks: still used by {', '.join(others)}", file=stdout)
    if stack_exists(target, AGENT_RUNTIME):
        print(
            "note: the AgentRuntime stack still points at this endpoint; destroy it with agent-infra destroy",
            file=stdout,
        )
    assembly = cli.synth_stacks(config, args.out, "speech", stdout)
    code = cli.run_toolkit(
        destroy_command(assembly, stacks, profile=target.profile), region=target.region, out=stdout
    )
    if code == 0:
        print(
            "destroyed; the model bucket and its access-log bucket are retained (see docs/infrastructure.md)",
            file=stdout,
        )
    return code


def _status(spec: ModelSpec, args: argparse.Namespace, stdout: TextIO) -> int:
    from .status import describe_endpoint, format_endpoint

    target = cli.target_from_args(args)
    info = describe_endpoint(target, spec.endpoint_name)
    if info is None:
        message = f"{spec.name}: not deployed (no endpoint {spec.endpoint_name} in {target.region})"
        if args.json:
            cli.print_json({"model": spec.name, "deployed": False, "region": target.region}, stdout)
        else:
            print(message, file=stdout)
        return 1
    if args.json:
        cli.print_json({"model": spec.name, "deployed": True, **info}, stdout)
    else:
        print("\n".join(format_endpoint(info)), file=stdout)
    return 0


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Entry point of ``speech-infra``.

    Args:
        argv: Arguments (``sys.argv[1:]`` by default).
        stdout: Where normal output goes (tests).

    Returns:
        The exit code: 0 success, 1 failure (AWS, synth, deploy), 2 usage (unknown model, bad setting).
    """
    args = build_parser().parse_args(argv)
    cli.configure_logging(args.verbose)
    out = stdout or sys.stdout

    def command() -> int:
        try:
            spec = get_model(args.model)
        except UnknownModelError as exc:
            raise cli.CliError(str(exc), cli.EXIT_USAGE) from None
        if args.command != "status":
            cli.print_node_hint()
        if args.command == "synth":
            cli.synth_stacks(_config(spec, args), args.out, "speech", out)
            return 0
        if args.command == "deploy":
            return _deploy(spec, args, out)
        if args.command == "destroy":
            return _destroy(spec, args, out)
        return _status(spec, args, out)

    return cli.run_cli(PROG, command)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
