"""Synthesize in-process, and drive the pinned CDK toolkit (``npx aws-cdk@<pin>``) with streamed output.

``synth`` runs the Python app in this interpreter and writes a cloud assembly: no Node package, no
network, no Docker. ``deploy``/``destroy``/``bootstrap`` hand that assembly to the CDK CLI
(``--app <assembly dir>``), which ``npx`` downloads on first use, and copy its progress to the console
line by line as it comes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TextIO

# jsii (the Node runtime under aws-cdk-lib) prints a full-screen banner on end-of-life Node releases;
# the CLIs print their own one-line hint instead (see ``node_hint``).
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

from .config import InfraConfig

__all__ = [
    "CDK_CLI_ENV",
    "CDK_CLI_VERSION",
    "SynthError",
    "SynthResult",
    "ToolkitError",
    "bootstrap_command",
    "cdk_cli",
    "deploy_command",
    "destroy_command",
    "node_hint",
    "run_streaming",
    "synth",
]

logger = logging.getLogger(__name__)

#: The CDK CLI release the assembly is handed to (supports cloud-assembly schema 55, aws-cdk-lib 2.275).
CDK_CLI_VERSION = "2.1148.1"
#: Replaces ``npx --yes aws-cdk@<pin>`` (a shell-style command line), e.g. a globally installed ``cdk``.
CDK_CLI_ENV = "STRANDS_VOICE_CDK_CLI"


class ToolkitError(RuntimeError):
    """The CDK CLI could not be started; the message is one line for the user."""


class SynthError(RuntimeError):
    """Synthesis failed (cdk-nag findings, a missing Dockerfile, ...); the message is for the user."""


@dataclass(frozen=True)
class SynthResult:
    """A synthesized cloud assembly.

    Attributes:
        assembly_dir: The directory to pass as ``--app``.
        templates: CloudFormation template path of each stack, by stack name, in deployment order.
        seconds: How long synthesis took.
    """

    assembly_dir: Path
    templates: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


def _nag_summary(report: Path) -> list[str]:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    lines = []
    for plugin in data.get("pluginReports", []):
        for violation in plugin.get("violations", []):
            for construct in violation.get("violatingConstructs", []):
                lines.append(f"{violation.get('ruleName')} at {construct.get('constructPath')}")
    return lines


def synth(config: InfraConfig, outdir: Path, *, speech: bool = True, agent: bool = True) -> SynthResult:
    """Build and synthesize the app in this process, with cdk-nag, writing the assembly to ``outdir``.

    Args:
        config: Deployment settings.
        outdir: Assembly directory (created; an earlier assembly there is replaced).
        speech: Include the speech stacks.
        agent: Include the agent stacks.

    Returns:
        The assembly and its templates.

    Raises:
        SynthError: a cdk-nag finding without acknowledgment, a missing Dockerfile, or any other
            construct error, summarized in one line per problem.
    """
    from .app_builder import build_app

    started = time.monotonic()
    outdir = Path(outdir).resolve()
    for dockerfile in _dockerfiles(config, speech=speech, agent=agent):
        if not (config.repo_root / dockerfile).is_file():
            raise SynthError(f"{dockerfile} not found under {config.repo_root}")
    built = build_app(config, speech=speech, agent=agent, outdir=str(outdir))
    try:
        assembly = built.app.synth()
    except RuntimeError as exc:
        report = outdir / "validation-report.json"
        findings = _nag_summary(report) if "ValidationFailed" in str(exc) else []
        if findings:
            raise SynthError(
                f"cdk-nag found {len(findings)} unacknowledged finding(s) (report: {report}):\n  "
                + "\n  ".join(findings)
            ) from None
        raise SynthError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    templates = {}
    for name in built.stacks:
        artifact = assembly.get_stack_by_name(name)
        templates[name] = outdir / artifact.template_file
    result = SynthResult(assembly_dir=outdir, templates=templates, seconds=time.monotonic() - started)
    logger.debug("stacks=<%s>, seconds=<%.1f> | synthesized", ",".join(templates), result.seconds)
    return result


def _dockerfiles(config: InfraConfig, *, speech: bool, agent: bool) -> list[str]:
    from .agent_runtime import AGENT_DOCKERFILE

    files = [config.speech_model.container_dockerfile] if speech else []
    return [*files, AGENT_DOCKERFILE] if agent else files


def cdk_cli(environ: Mapping[str, str] | None = None) -> list[str]:
    """The command line that starts the CDK CLI: ``$STRANDS_VOICE_CDK_CLI``, else the pinned npx package."""
    environ = os.environ if environ is None else environ
    override = environ.get(CDK_CLI_ENV, "").strip()
    if override:
        return shlex.split(override)
    return ["npx", "--yes", f"aws-cdk@{CDK_CLI_VERSION}"]


def _common(assembly_dir: Path, profile: str | None) -> list[str]:
    options = ["--app", str(assembly_dir)]
    return [*options, "--profile", profile] if profile else options


def deploy_command(
    assembly_dir: Path,
    stacks: Sequence[str],
    *,
    profile: str | None = None,
    outputs_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """``cdk deploy`` of ``stacks`` from a synthesized assembly, non-interactive, one line per event.

    Args:
        assembly_dir: The assembly (``synth``'s output).
        stacks: Stack names, in order.
        profile: A named AWS profile.
        outputs_file: Where the CLI writes the stacks' outputs as JSON.
        environ: The environment to read ``STRANDS_VOICE_CDK_CLI`` from.

    Returns:
        The argument vector.
    """
    command = [*cdk_cli(environ), "deploy", *stacks, *_common(assembly_dir, profile)]
    command += ["--require-approval", "never", "--progress", "events"]
    if outputs_file is not None:
        command += ["--outputs-file", str(outputs_file)]
    return command


def destroy_command(
    assembly_dir: Path,
    stacks: Sequence[str],
    *,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """``cdk destroy --force`` of ``stacks`` (the CLI orders them by their dependencies)."""
    return [*cdk_cli(environ), "destroy", *stacks, *_common(assembly_dir, profile), "--force"]


def bootstrap_command(
    assembly_dir: Path,
    account: str,
    region: str,
    *,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[str]:
    """``cdk bootstrap aws://<account>/<region>``: the asset bucket and repository the deploy needs."""
    return [*cdk_cli(environ), "bootstrap", f"aws://{account}/{region}", *_common(assembly_dir, profile)]


def run_streaming(
    command: Sequence[str],
    *,
    out: TextIO | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> int:
    """Run ``command``, copying its stdout and stderr to ``out`` line by line as they come.

    Args:
        command: The argument vector.
        out: Where to copy the output (``sys.stdout`` by default).
        env: The child's environment (this process's by default).
        cwd: The child's working directory.

    Returns:
        The exit code (130 after Ctrl-C, once the child has stopped).

    Raises:
        ToolkitError: the program could not be started.
    """
    out = out or sys.stdout
    logger.debug("command=<%s> | starting", shlex.join(command))
    try:
        process = subprocess.Popen(
            list(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
    except FileNotFoundError:
        raise ToolkitError(
            f"'{command[0]}' not found; install Node.js 22+ (for npx) or set {CDK_CLI_ENV} to a cdk command"
        ) from None
    with process:
        assert process.stdout is not None
        try:
            for line in _lines(process.stdout):
                out.write(line)
                out.flush()
            return process.wait()
        except KeyboardInterrupt:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=30)
            return 130


def _lines(stream: IO[str]) -> Iterator[str]:
    yield from iter(stream.readline, "")


def node_hint() -> str | None:
    """A one-line note when ``node`` is missing or older than the releases jsii and the CDK CLI support."""
    try:
        version = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return (
            "note: Node.js not found; synth needs it (jsii) and deploy/destroy need npx: install Node.js 22+"
        )
    text = version.stdout.strip().lstrip("v")
    major = int(text.split(".", 1)[0]) if text.split(".", 1)[0].isdigit() else 0
    if major and major < 22:
        return f"note: Node.js {text} is end-of-life for the CDK; Node.js 22+ is recommended"
    return None
