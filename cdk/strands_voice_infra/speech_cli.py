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
from pathlib import Path
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from .aws import AwsTarget, CredentialsError, resolve_target, stack_exists
from .cli_common import (
    EXIT_USAGE,
    CliError,
    add_aws_options,
    add_output_options,
    add_version_option,
    configure_logging,
    default_outdir,
    print_json,
    print_node_hint,
    run_toolkit,
)
from .config import ConfigError, InfraConfig
from .models import MODELS, ModelSpec, UnknownModelError, get_model
from .stack_names import AGENT_RUNTIME, CDK_TOOLKIT, speech_stack_names

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)

PROG = "speech-infra"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``deploy``, ``destroy``, ``synth``, ``status``)."""
    parser = argparse.ArgumentParser(prog=PROG, description="Deploy a strands-voice TTS model on SageMaker.")
    add_version_option(parser)
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
            add_output_options(sub, "speech")
        if name != "synth":
            add_aws_options(sub)
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
        raise CliError(str(exc), EXIT_USAGE) from None


def _synth(config: InfraConfig, out: Path | None, stdout: TextIO) -> Path:
    from .toolkit import SynthError, synth

    try:
        result = synth(config, out or default_outdir("speech"), speech=True, agent=False)
    except SynthError as exc:
        raise CliError(str(exc)) from None
    for name, template in result.templates.items():
        print(f"{name}: {template}", file=stdout)
    print(f"synthesized {len(result.templates)} stacks in {result.seconds:.1f} s", file=stdout)
    return result.assembly_dir


def _target(args: argparse.Namespace) -> AwsTarget:
    try:
        return resolve_target(args.profile, args.region)
    except CredentialsError as exc:
        raise CliError(str(exc)) from None


def _deploy(spec: ModelSpec, args: argparse.Namespace, stdout: TextIO) -> int:
    from .toolkit import bootstrap_command, deploy_command

    config = _config(spec, args)
    target = _target(args)
    print(f"deploying {spec.name} to account {target.account}, region {target.region}", file=stdout)
    assembly = _synth(config, args.out, stdout)
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
    code = run_toolkit(
        deploy_command(assembly, speech_stack_names(spec), profile=target.profile),
        region=target.region,
        out=stdout,
    )
    if code == 0:
        print(
            f"endpoint {spec.endpoint_name} is in service; check it with: {PROG} status {spec.name}",
            file=stdout,
        )
    return code


def _destroy(spec: ModelSpec, args: argparse.Namespace, stdout: TextIO) -> int:
    from .toolkit import destroy_command

    config = _config(spec, args)
    target = _target(args)
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
    assembly = _synth(config, args.out, stdout)
    code = run_toolkit(
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

    target = _target(args)
    info = describe_endpoint(target, spec.endpoint_name)
    if info is None:
        message = f"{spec.name}: not deployed (no endpoint {spec.endpoint_name} in {target.region})"
        if args.json:
            print_json({"model": spec.name, "deployed": False, "region": target.region}, stdout)
        else:
            print(message, file=stdout)
        return 1
    if args.json:
        print_json({"model": spec.name, "deployed": True, **info}, stdout)
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
    configure_logging(args.verbose)
    out = stdout or sys.stdout
    try:
        try:
            spec = get_model(args.model)
        except UnknownModelError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        if args.command != "status":
            print_node_hint()
        if args.command == "synth":
            _synth(_config(spec, args), args.out, out)
            return 0
        if args.command == "deploy":
            return _deploy(spec, args, out)
        if args.command == "destroy":
            return _destroy(spec, args, out)
        return _status(spec, args, out)
    except CliError as exc:
        exc.exit(PROG)
    except (BotoCoreError, ClientError) as exc:
        CliError(f"AWS call failed: {exc}").exit(PROG)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
