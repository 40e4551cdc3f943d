"""The house: what each package exports, and which way the imports between the packages point.

protocol (strands_voice_protocol) <- library (strands_voice) <- example app (agentcore_app)
                                                               <- tools (strands_voice_tools)
protocol <- endpoint (kokoro_endpoint) <- tools;  protocol <- cdk (strands_voice_infra)
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import strands_voice_protocol

import strands_voice

ROOT = Path(__file__).resolve().parents[1]

# The public API a user reads in one screen; everything else is imported from its module.
PUBLIC_API = {
    "VoiceCallbackHandler",
    "VoicePlugin",
    "VoiceOptions",
    "VOICE_OPTIONS_KEY",
    "Mode",
    "run_voice",
    "Speakers",
    "Microphone",
    "NOTHING_HEARD",
    "TTSSession",
    "RetryPolicy",
    "FrameTransport",
    "WebSocketTransport",
    "SageMakerTransport",
    "transport_from_url",
    "IncrementalSentenceChunker",
    "Event",
    "EVENT_TYPES",
    "StrandsVoiceError",
    "ConfigurationError",
    "MissingDependencyError",
    "TextEncodingError",
    "TTSError",
    "TTSConnectionError",
    "TTSRequestError",
    "TTSTimeoutError",
}

# Each package's source tree and the top-level packages it may import (besides itself).
PACKAGES = {
    "strands_voice_protocol": (ROOT / "protocol" / "strands_voice_protocol", set()),
    "strands_voice": (ROOT / "strands_voice", {"strands_voice_protocol"}),
    "kokoro_endpoint": (ROOT / "endpoint" / "kokoro_endpoint", {"strands_voice_protocol"}),
    "agentcore_app": (
        ROOT / "examples" / "agentcore_app" / "agentcore_app",
        {"strands_voice", "strands_voice_protocol"},
    ),
    "strands_voice_infra": (ROOT / "cdk" / "strands_voice_infra", {"strands_voice_protocol"}),
    "strands_voice_tools": (
        ROOT / "tools" / "strands_voice_tools",
        {"strands_voice", "strands_voice_protocol", "kokoro_endpoint", "agentcore_app"},
    ),
}


def _modules(package: object, prefix: str) -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(package.__path__, prefix=prefix)  # type: ignore[attr-defined]
        if not info.name.split(".")[-1].startswith("_")
    )


def _imported_packages(tree: Path) -> dict[str, set[str]]:
    """Top-level workspace packages each file under ``tree`` imports (lazy imports included)."""
    found: dict[str, set[str]] = {}
    for path in sorted(tree.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        found[str(path.relative_to(ROOT))] = names & set(PACKAGES)
    return found


def test_public_api_is_one_screen() -> None:
    assert set(strands_voice.__all__) == PUBLIC_API
    assert len(strands_voice.__all__) == len(PUBLIC_API), "duplicate names in __all__"
    for symbol in strands_voice.__all__:
        assert getattr(strands_voice, symbol) is not None


@pytest.mark.parametrize(
    ("package", "prefix"),
    [(strands_voice, "strands_voice."), (strands_voice_protocol, "strands_voice_protocol.")],
)
def test_every_module_declares_all(package: object, prefix: str) -> None:
    for name in _modules(package, prefix):
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), f"{name} has no __all__"
        for symbol in module.__all__:
            assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol!r}"


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_imports_point_one_way(package: str) -> None:
    tree, allowed = PACKAGES[package]
    upward = {
        file: sorted(names - allowed - {package})
        for file, names in _imported_packages(tree).items()
        if names - allowed - {package}
    }
    assert upward == {}, f"{package} imports packages it must not: {upward}"


def test_protocol_and_endpoint_import_without_strands_or_aws() -> None:
    """The endpoint and the protocol core must not drag in Strands, boto3 or the SageMaker SDK."""
    code = (
        "import sys, strands_voice_protocol.frames, strands_voice_protocol.audio, "
        "strands_voice_protocol.sse, strands_voice_protocol.sentences, strands_voice_protocol.speech_text, "
        "strands_voice_protocol.chunker, strands_voice_protocol.events, strands_voice_protocol.errors, "
        "kokoro_endpoint.serving.app; "
        "heavy = [m for m in ('strands', 'boto3', 'bedrock_agentcore', 'aws_sdk_sagemaker_runtime_http2', "
        "'strands_voice') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""


def test_endpoint_locked_dependencies_have_no_agent_framework() -> None:
    """The endpoint image installs what ``uv export --package kokoro-endpoint --no-dev`` prints."""
    uv = os.environ.get("UV") or shutil.which("uv")  # `uv run` sets UV to its own binary
    assert uv, "uv is needed to read the lock (pip install uv)"
    result = subprocess.run(
        [
            uv,
            "export",
            "--package",
            "kokoro-endpoint",
            "--no-dev",
            "--no-hashes",
            "--frozen",
            "--no-emit-project",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    pinned = {
        line.split("==")[0].split(" @ ")[0].strip().lower()
        for line in result.stdout.splitlines()
        if line and not line.startswith(("#", " "))
    }
    assert "onnxruntime" in pinned, result.stdout  # the export is the endpoint's real set
    assert pinned & {"strands-agents", "boto3", "botocore", "bedrock-agentcore"} == set()


#: Imports of another package's private module that must stay, each with why (none today: every name one
#: subpackage needs of another is exported by that subpackage's ``__init__``).
PRIVATE_REACH_INS_ALLOWED: dict[tuple[str, str], str] = {}


def _private_owner(module: str) -> str | None:
    """The package whose private part ``module`` names (``strands_voice.speech._response`` ->
    ``strands_voice.speech``); None for a public module."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def private_reach_ins(path: Path, package: str, tree: Path) -> list[str]:
    """The modules (or names) of another package's private part that ``path`` imports: a module may
    import a private module (or a private name) of its own package, or of a package above it, and nothing
    else private."""
    home = ".".join((package, *path.relative_to(tree).parent.parts))
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            module = node.module
            imported = [(f"{module}.{alias.name}", _owner_of(module, alias.name)) for alias in node.names]
        elif isinstance(node, ast.Import):
            imported = [(alias.name, _private_owner(alias.name)) for alias in node.names]
        else:
            continue
        found += [
            name
            for name, owner in imported
            if name.split(".")[0] in PACKAGES and owner is not None and not f"{home}.".startswith(f"{owner}.")
        ]
    return found


def _owner_of(module: str, name: str) -> str | None:
    """The package whose private part ``from module import name`` takes (None: a public name). A private
    name of a module is its package's (a sibling module may use it)."""
    owner = _private_owner(module)
    if owner is not None or not name.startswith("_"):
        return owner
    top, *rest = module.split(".")
    is_package = top in PACKAGES and PACKAGES[top][0].joinpath(*rest, "__init__.py").exists()
    return module if is_package else module.rpartition(".")[0]


def test_the_reach_in_scan_tells_a_reach_in_from_a_home_import(tmp_path: Path) -> None:
    tree = tmp_path / "strands_voice"
    (tree / "agent").mkdir(parents=True)
    module = tree / "agent" / "_handler.py"
    module.write_text(
        "from strands_voice.speech._response import Response\n"  # another subpackage's private module
        "from strands_voice.speech import _helper\n"  # a private name of another subpackage
        "import strands_voice.session._driver\n"
        "from strands_voice.agent._workers import Workers\n"  # its own package
        "from strands_voice._closing import close\n"  # the package above
        "from strands_voice.speech import Response\n"  # a public name
        "from strands_voice_protocol.aio.tasks import cancel_and_wait\n",
        encoding="utf-8",
    )
    assert private_reach_ins(module, "strands_voice", tree) == [
        "strands_voice.speech._response.Response",
        "strands_voice.speech._helper",
        "strands_voice.session._driver",
    ]


def test_no_module_reaches_into_another_packages_private_modules() -> None:
    found = {
        (str(path.relative_to(ROOT)), name)
        for package, (tree, _allowed) in PACKAGES.items()
        for path in sorted(tree.rglob("*.py"))
        if "__pycache__" not in path.parts
        for name in private_reach_ins(path, package, tree)
    }
    unexplained = sorted(found - set(PRIVATE_REACH_INS_ALLOWED))
    assert unexplained == [], f"import the subpackage's public name instead: {unexplained}"
    stale = sorted(set(PRIVATE_REACH_INS_ALLOWED) - found)
    assert stale == [], f"allowed reach-ins that are gone (drop them from the list): {stale}"
