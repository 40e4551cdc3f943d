"""Every module declares __all__, and the package exports exactly the union of its library modules'."""

from __future__ import annotations

import importlib
import pkgutil

import strands_voice

# Commands, not library API: their names stay in their own modules.
COMMAND_MODULES = {"strands_voice.cli", "strands_voice.demo", "strands_voice.bench", "strands_voice.models"}


def _modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(strands_voice.__path__, prefix="strands_voice.")
        if not info.name.split(".")[-1].startswith("_")
    )


def test_every_module_declares_all() -> None:
    for name in _modules():
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), f"{name} has no __all__"
        for symbol in module.__all__:
            assert hasattr(module, symbol), f"{name}.__all__ names missing {symbol!r}"


def test_package_exports_exactly_the_union_of_library_modules() -> None:
    union: set[str] = set()
    for name in _modules():
        if name in COMMAND_MODULES or name.count(".") > 1:
            continue
        union.update(importlib.import_module(name).__all__)
    assert set(strands_voice.__all__) == union
    assert len(strands_voice.__all__) == len(set(strands_voice.__all__)), "duplicate names in __all__"
    for symbol in strands_voice.__all__:
        assert getattr(strands_voice, symbol) is not None


def test_names_are_not_shadowed_between_modules() -> None:
    owners: dict[str, str] = {}
    for name in _modules():
        if name in COMMAND_MODULES or name.count(".") > 1:
            continue
        for symbol in importlib.import_module(name).__all__:
            assert symbol not in owners, f"{symbol!r} exported by both {owners.get(symbol)} and {name}"
            owners[symbol] = name


def test_core_modules_import_without_strands_or_aws() -> None:
    """The endpoint imports the codecs; they must not drag in Strands, boto3 or the SageMaker SDK."""
    import subprocess
    import sys

    code = (
        "import sys, strands_voice.frames, strands_voice.audio, strands_voice.sse, strands_voice.chunker; "
        "heavy = [m for m in ('strands', 'boto3', 'aws_sdk_sagemaker_runtime_http2') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == ""
