"""The CDK toolkit command lines, and streaming a child's output as it comes."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest
from strands_voice_infra import toolkit
from strands_voice_infra.models import get_model
from strands_voice_infra.stack_names import speech_stack_names

ASSEMBLY = Path("/tmp/assembly")


def test_default_cli_is_the_pinned_npx_package() -> None:
    assert toolkit.cdk_cli({}) == ["npx", "--yes", f"aws-cdk@{toolkit.CDK_CLI_VERSION}"]
    major, minor, patch = toolkit.CDK_CLI_VERSION.split(".")
    assert major == "2" and int(minor) >= 1000 and patch.isdigit()  # a CLI release, not a library one


def test_cli_override_is_split_like_a_shell() -> None:
    environ = {toolkit.CDK_CLI_ENV: "/opt/my cdk/bin/cdk --verbose"}
    assert toolkit.cdk_cli(environ) == ["/opt/my", "cdk/bin/cdk", "--verbose"]
    environ = {toolkit.CDK_CLI_ENV: "'/opt/my cdk/bin/cdk'"}
    assert toolkit.cdk_cli(environ) == ["/opt/my cdk/bin/cdk"]


def test_deploy_command() -> None:
    stacks = speech_stack_names(get_model("kokoro-82m"))
    command = toolkit.deploy_command(
        ASSEMBLY, stacks, profile="dev", outputs_file=Path("out.json"), environ={}
    )
    assert command == [
        "npx",
        "--yes",
        f"aws-cdk@{toolkit.CDK_CLI_VERSION}",
        "deploy",
        "SpeechFoundation",
        "SpeechModelCache",
        "Speech-kokoro-82m",
        "--app",
        str(ASSEMBLY),
        "--profile",
        "dev",
        "--require-approval",
        "never",
        "--progress",
        "events",
        "--outputs-file",
        "out.json",
    ]


def test_destroy_command_is_forced_and_has_no_profile_by_default() -> None:
    command = toolkit.destroy_command(ASSEMBLY, ["AgentRuntime", "AgentFoundation"], environ={})
    assert command[3:] == ["destroy", "AgentRuntime", "AgentFoundation", "--app", str(ASSEMBLY), "--force"]


def test_bootstrap_command_names_the_environment() -> None:
    command = toolkit.bootstrap_command(ASSEMBLY, "123456789012", "eu-west-1", environ={})
    assert command[3:] == ["bootstrap", "aws://123456789012/eu-west-1", "--app", str(ASSEMBLY)]


class _TimedOut(io.StringIO):
    """Records when each write happened."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def write(self, text: str) -> int:
        self.times.append(time.monotonic())
        return super().write(text)


def test_output_is_streamed_line_by_line_as_it_comes(tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text(
        "import sys, time\n"
        "print('first', flush=True)\n"
        "time.sleep(1.0)\n"
        "print('to stderr', file=sys.stderr, flush=True)\n"
        "sys.exit(3)\n",
        encoding="utf-8",
    )
    out = _TimedOut()
    started = time.monotonic()
    code = toolkit.run_streaming([sys.executable, str(script)], out=out)
    finished = time.monotonic()
    assert code == 3
    assert out.getvalue() == "first\nto stderr\n"
    assert out.times[0] - started < finished - started - 0.5  # 'first' arrived well before the end


def test_missing_program_is_one_clear_error() -> None:
    with pytest.raises(toolkit.ToolkitError, match=r"not found; install Node\.js"):
        toolkit.run_streaming(["/nonexistent/npx", "--version"], out=io.StringIO())


def test_node_hint_is_one_line_or_nothing() -> None:
    hint = toolkit.node_hint()
    assert hint is None or (hint.startswith("note: ") and "\n" not in hint)
