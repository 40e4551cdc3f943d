"""``agent-infra``: deploy, destroy, synthesize and inspect the voice agent's AgentCore runtime; run the demo.

agent-infra deploy --bedrock-model-id us.anthropic.claude-haiku-4-5-20251001-v1:0
agent-infra status
agent-infra demo --prompt "Tell me about the moon" [--endpoint-url http://localhost:8080]
agent-infra talk [-- --input q.wav --output a.wav]     (runs strands-voice talk --runtime-arn)
agent-infra page [--port 8000]                         (runs strands-voice demo --serve --runtime-arn)
agent-infra synth [--out DIR]
agent-infra destroy
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TextIO

from botocore.exceptions import BotoCoreError, ClientError

from . import cli_common as cli
from .config import (
    AGENT_RUNTIME_NAME,
    CONVERSATION_STORES,
    DEFAULT_BEDROCK_MODEL_ID,
    ConfigError,
    InfraConfig,
)
from .models import MODELS, UnknownModelError, get_model
from .runtime_cli import RUNTIME_COMMANDS, add_runtime_commands, run_runtime_command
from .stack_names import AGENT_STACKS

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)

PROG = "agent-infra"


def _add_deployment_options(sub: argparse.ArgumentParser) -> None:
    """What the deployed app does: where it keeps conversations, how it hears spoken calls."""
    sub.add_argument(
        "--conversation-store",
        choices=CONVERSATION_STORES,
        help="where the agent keeps conversations (default: s3; see docs/infrastructure.md)",
    )
    sub.add_argument(
        "--call-recognizer",
        help="how spoken calls are heard: whisper (default, in the app) or transcribe[:<language>] "
        "(the runtime role may then call Amazon Transcribe)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``deploy``, ``destroy``, ``synth``, ``status``, ``demo``, ``talk``, ``page``)."""
    parser = argparse.ArgumentParser(
        prog=PROG, description="Deploy the strands-voice agent on Bedrock AgentCore."
    )
    cli.add_version_option(parser)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs on stderr")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    for name, text in {
        "deploy": "build and deploy the agent's image, role and AgentCore runtime",
        "destroy": "delete the agent's stacks",
        "synth": "write the CloudFormation templates, offline",
    }.items():
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument(
            "--bedrock-model-id",
            required=name == "deploy",
            help=f"Bedrock model or inference profile id, or ARN (synth default: {DEFAULT_BEDROCK_MODEL_ID})",
        )
        sub.add_argument(
            "--speech-model",
            default="kokoro-82m",
            help=f"the TTS model whose endpoint to use ({', '.join(MODELS)})",
        )
        _add_deployment_options(sub)
        cli.add_output_options(sub, "agent")
        if name != "synth":
            cli.add_aws_options(sub)

    status = commands.add_parser("status", help="describe the deployed runtime and its TTS endpoint")
    status.add_argument("--speech-model", default="kokoro-82m", help="the TTS model whose endpoint to check")
    status.add_argument("--json", action="store_true", help="print JSON")
    cli.add_aws_options(status)

    demo = commands.add_parser(
        "demo",
        help="compare time to first audio, bidi vs batch, against a running app",
        description="Send the same prompt in each mode and print when the first audio arrived.",
    )
    where = demo.add_mutually_exclusive_group()
    where.add_argument("--endpoint-url", help="a running app, e.g. http://localhost:8080 (POST /invocations)")
    where.add_argument(
        "--runtime-arn", help="a deployed runtime's ARN (default: the one agent-infra deployed)"
    )
    demo.add_argument("--prompt", required=True, help="what to ask the agent")
    demo.add_argument("--modes", default="bidi,batch", help="comma-separated modes (default: bidi,batch)")
    demo.add_argument("--repeat", type=int, default=1, help="runs per mode; the summary uses the median")
    demo.add_argument("--voice", help="voice name (default: the app's)")
    demo.add_argument("--timeout", type=float, default=120.0, help="seconds to wait on a local app")
    demo.add_argument("--json", action="store_true", help="print the runs as JSON")
    cli.add_aws_options(demo)
    add_runtime_commands(commands)
    return parser


def _config(args: argparse.Namespace) -> InfraConfig:
    try:
        spec = get_model(args.speech_model)
    except UnknownModelError as exc:
        raise cli.CliError(str(exc), cli.EXIT_USAGE) from None
    try:
        return InfraConfig(speech_model=spec).with_overrides(
            bedrock_model_id=getattr(args, "bedrock_model_id", None),
            conversation_store=getattr(args, "conversation_store", None),
            call_recognizer=getattr(args, "call_recognizer", None),
            repo_root=getattr(args, "repo_root", None),
        )
    except ConfigError as exc:
        raise cli.CliError(str(exc), cli.EXIT_USAGE) from None


def _deploy(args: argparse.Namespace, stdout: TextIO) -> int:
    from .status import describe_endpoint

    config = _config(args)
    target = cli.target_from_args(args)
    where = f"account {target.account}, region {target.region}"
    print(f"deploying the voice agent ({config.bedrock_model_id}) to {where}", file=stdout)
    try:
        endpoint = describe_endpoint(target, config.endpoint_name)
    except (
        BotoCoreError,
        ClientError,
    ) as exc:  # e.g. no sagemaker:DescribeEndpoint: the deploy can still go on
        logger.debug("error=<%s> | endpoint check skipped", exc)
        endpoint = {}
    if endpoint is None:
        print(
            f"note: endpoint {config.endpoint_name} not found in {target.region}; the agent will speak once "
            f"'speech-infra deploy {config.speech_model.name}' is done",
            file=stdout,
        )
    assembly = cli.synth_stacks(config, args.out, "agent", stdout)
    code = cli.deploy_stacks(target, assembly, AGENT_STACKS, stdout)
    if code == 0:
        print(
            f"runtime {config.agent_runtime_name} deployed; try: {PROG} demo --prompt 'Hello there'",
            file=stdout,
        )
    return code


def _destroy(args: argparse.Namespace, stdout: TextIO) -> int:
    from .toolkit import destroy_command

    config = _config(args)
    target = cli.target_from_args(args)
    assembly = cli.synth_stacks(config, args.out, "agent", stdout)
    stacks = list(reversed(AGENT_STACKS))
    return cli.run_toolkit(
        destroy_command(assembly, stacks, profile=target.profile), region=target.region, out=stdout
    )


def _status(args: argparse.Namespace, stdout: TextIO) -> int:
    from .status import describe_endpoint, describe_runtime, format_endpoint, format_runtime

    config = _config(args)
    target = cli.target_from_args(args)
    runtime = describe_runtime(target, AGENT_RUNTIME_NAME)
    endpoint = describe_endpoint(target, config.endpoint_name)
    if args.json:
        cli.print_json({"region": target.region, "runtime": runtime, "endpoint": endpoint}, stdout)
    else:
        if runtime is None:
            print(f"runtime    {AGENT_RUNTIME_NAME}: not deployed in {target.region}", file=stdout)
        else:
            print("\n".join(format_runtime(runtime)), file=stdout)
        if endpoint is None:
            print(f"endpoint   {config.endpoint_name}: not deployed in {target.region}", file=stdout)
        else:
            print("\n".join(format_endpoint(endpoint)), file=stdout)
    return 0 if runtime is not None else 1


def _demo(args: argparse.Namespace, stdout: TextIO) -> int:
    from .demo import MODES, format_results, format_run, local_stream, run_demo, runtime_stream
    from .status import find_runtime

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        raise cli.CliError(
            f"unknown mode(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(MODES)}",
            cli.EXIT_USAGE,
        )
    if args.endpoint_url:
        opener = local_stream(args.endpoint_url, timeout=args.timeout)
        where = args.endpoint_url
    else:
        target = cli.target_from_args(args)
        arn = args.runtime_arn
        if not arn:
            summary = find_runtime(target, AGENT_RUNTIME_NAME)
            if summary is None:
                raise cli.CliError(
                    f"no runtime {AGENT_RUNTIME_NAME} in {target.region}; deploy it ({PROG} deploy) "
                    "or pass --endpoint-url"
                )
            arn = summary["agentRuntimeArn"]
        opener = runtime_stream(target.client("bedrock-agentcore"), arn)
        where = arn
    if not args.json:
        print(f"asking {where}: {args.prompt!r}", file=stdout)
    try:
        results = run_demo(
            opener,
            args.prompt,
            modes=modes,
            repeat=args.repeat,
            voice=args.voice,
            on_result=None if args.json else lambda r: print(format_run(r), file=stdout, flush=True),
        )
    except OSError as exc:
        raise cli.CliError(f"could not reach {where}: {exc}") from None
    except Exception as exc:  # botocore errors from the runtime invoke: one line, not a traceback
        if type(exc).__module__.startswith("botocore"):
            raise cli.CliError(f"the runtime call failed: {exc}") from None
        raise
    if args.json:
        cli.print_json([r.figures() for r in results], stdout)
    else:
        print("\n".join(format_results(results)), file=stdout)
    return 0 if any(r.first_audio_s is not None for r in results) else 1


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Entry point of ``agent-infra``.

    Args:
        argv: Arguments (``sys.argv[1:]`` by default).
        stdout: Where normal output goes (tests).

    Returns:
        The exit code: 0 success, 1 failure (AWS, synth, deploy, no audio), 2 usage.
    """
    args = build_parser().parse_args(argv)
    cli.configure_logging(args.verbose)
    out = stdout or sys.stdout

    def command() -> int:
        if args.command in {"synth", "deploy", "destroy"}:
            cli.print_node_hint()
        if args.command == "synth":
            cli.synth_stacks(_config(args), args.out, "agent", out)
            return 0
        if args.command == "deploy":
            return _deploy(args, out)
        if args.command == "destroy":
            return _destroy(args, out)
        if args.command == "status":
            return _status(args, out)
        if args.command in RUNTIME_COMMANDS:
            return run_runtime_command(args, out)
        return _demo(args, out)

    return cli.run_cli(PROG, command)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
