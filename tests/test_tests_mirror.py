"""The tests mirror the packages: a reader looking for the tests of ``agentcore_app/call/`` opens
``tests/app/call/``.

Every folder of a package's test directory is a folder of that package, and a test module whose name says
it is about a subpackage (``test_call_...`` beside ``call/``) lives in that subpackage's folder.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
#: Each package's test directory and the package it mirrors.
MIRRORS = {
    TESTS / "protocol": ROOT / "protocol" / "strands_voice_protocol",
    TESTS / "strands_voice": ROOT / "strands_voice",
    TESTS / "endpoint": ROOT / "endpoint" / "kokoro_endpoint",
    TESTS / "app": ROOT / "examples" / "agentcore_app" / "agentcore_app",
    TESTS / "tools": ROOT / "tools" / "strands_voice_tools",
    TESTS / "cdk": ROOT / "cdk" / "strands_voice_infra",
}


def subpackages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def misplaced(tests: Path, package: Path) -> list[str]:
    """Test folders with no package folder, and test modules named for a subpackage but outside it."""
    found = []
    for folder in sorted({tests, *(p for p in tests.rglob("*") if p.is_dir() and p.name != "__pycache__")}):
        mirrored = package / folder.relative_to(tests)
        if not mirrored.is_dir():
            found.append(f"{folder.relative_to(ROOT)}/ (no {mirrored.relative_to(ROOT)}/)")
            continue
        for sub in subpackages(mirrored):
            found.extend(str(module.relative_to(ROOT)) for module in sorted(folder.glob(f"test_{sub}_*.py")))
    return found


def test_every_test_folder_mirrors_its_package() -> None:
    assert {str(t.relative_to(ROOT)): misplaced(t, p) for t, p in MIRRORS.items() if misplaced(t, p)} == {}


def test_the_check_sees_a_stray_folder_and_a_module_beside_its_folder(tmp_path: Path) -> None:
    package, tests = tmp_path / "pkg", tmp_path / "tests"
    for folder in (package / "call", tests / "call", tests / "gone"):
        folder.mkdir(parents=True)
    (package / "call" / "__init__.py").write_text("", encoding="utf-8")
    for module in (
        tests / "test_call_frames.py",
        tests / "call" / "test_call_ending.py",
        tests / "test_x.py",
    ):
        module.write_text("", encoding="utf-8")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        assert misplaced(tests, package) == ["tests/test_call_frames.py", "tests/gone/ (no pkg/gone/)"]
    finally:
        ROOT = saved
