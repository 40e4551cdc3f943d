"""Infrastructure test fixtures: a stub build context, and the speech and agent apps synthesized once.

Synthesis is the slow part (the jsii runtime), so each CLI's ``synth`` runs once per session and the stack
tests read the templates it wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")


@dataclass(frozen=True)
class Synthesized:
    """One CLI synth: its output, assembly directory and templates (parsed) by stack name."""

    output: str
    assembly: Path
    templates: dict[str, dict[str, Any]]


def make_build_context(root: Path) -> Path:
    """A stand-in repository root with both Dockerfiles (synth only hashes and stages them)."""
    for dockerfile in ("endpoint/Dockerfile", "examples/agentcore_app/Dockerfile"):
        path = root / dockerfile
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("FROM public.ecr.aws/docker/library/python:3.12-slim\n", encoding="utf-8")
    (root / "pyproject.toml").write_text("[project]\nname = 'stub'\n", encoding="utf-8")
    (root / "strands_voice").mkdir()
    (root / "strands_voice" / "__init__.py").write_text("", encoding="utf-8")
    # The app's own BuildKit ignore file: only what its image copies.
    (root / "examples/agentcore_app/Dockerfile.dockerignore").write_text(
        "*\n!pyproject.toml\n!strands_voice/\n**/__pycache__\n", encoding="utf-8"
    )
    # Never part of any build context.
    for junk in (
        ".venv/lib/big.bin",
        ".git/HEAD",
        "tests/test_x.py",
        "cdk/cdk.out/old/x.json",
        "node_modules/m/x.js",
    ):
        (root / junk).parent.mkdir(parents=True, exist_ok=True)
        (root / junk).write_text("junk", encoding="utf-8")
    (root / "strands_voice" / "__pycache__").mkdir()
    (root / "strands_voice" / "__pycache__" / "x.pyc").write_bytes(b"\0")
    return root


@pytest.fixture(scope="session")
def build_context(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stub Docker build context (the real Dockerfiles belong to the endpoint and app)."""
    return make_build_context(tmp_path_factory.mktemp("repo"))


def _synth(cli: Any, argv: list[str], out: Path) -> Synthesized:
    import io

    buffer = io.StringIO()
    assert cli.main([*argv, "--out", str(out)], stdout=buffer) == 0
    templates = {
        path.name.removesuffix(".template.json"): json.loads(path.read_text(encoding="utf-8"))
        for path in out.glob("*.template.json")
    }
    return Synthesized(output=buffer.getvalue(), assembly=out, templates=templates)


@pytest.fixture(scope="session")
def speech_synth(build_context: Path, tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """``speech-infra synth kokoro-82m`` with default settings."""
    from strands_voice_infra import speech_cli

    out = tmp_path_factory.mktemp("speech-assembly")
    return _synth(speech_cli, ["synth", "kokoro-82m", "--repo-root", str(build_context)], out)


@pytest.fixture(scope="session")
def agent_synth(build_context: Path, tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """``agent-infra synth --bedrock-model-id <US inference profile>``."""
    from strands_voice_infra import agent_cli

    out = tmp_path_factory.mktemp("agent-assembly")
    argv = ["synth", "--bedrock-model-id", "us.anthropic.claude-haiku-4-5-20251001-v1:0"]
    return _synth(agent_cli, [*argv, "--repo-root", str(build_context)], out)


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fake credentials and a region for moto; nothing reaches AWS."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield
