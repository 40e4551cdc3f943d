"""The command-line options every command that reaches a deployed runtime takes, and the target they name."""

from __future__ import annotations

import argparse
from typing import Any

from strands_voice_tools.runtime.signing import RuntimeTarget, runtime_target

__all__ = ["add_runtime_options", "target_from_args"]


def add_runtime_options(parser: Any, *, arn_help: str, required: bool = False) -> None:
    """``--runtime-arn``, ``--qualifier`` and ``--endpoint-url`` on ``parser`` (or an argument group)."""
    parser.add_argument("--runtime-arn", metavar="ARN", required=required, help=arn_help)
    parser.add_argument("--qualifier", default="DEFAULT", help="the runtime endpoint (default: DEFAULT)")
    parser.add_argument(
        "--endpoint-url",
        metavar="URL",
        help="AgentCore's data plane (default: AWS_ENDPOINT_URL_BEDROCK_AGENTCORE, else the region's; "
        "http:// means plain ws://)",
    )


def target_from_args(args: argparse.Namespace) -> RuntimeTarget:
    """The runtime the options name (``--region`` signs for another region than the ARN's).

    Raises:
        StrandsVoiceError: not a runtime ARN, or a bad endpoint URL.
    """
    return runtime_target(
        args.runtime_arn, region=args.region, qualifier=args.qualifier, endpoint_url=args.endpoint_url
    )
