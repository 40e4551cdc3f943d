"""The library on its own: its wheels install with pip into a fresh venv outside the workspace.

``uv build`` makes the wheels of ``strands-voice`` and ``strands-voice-protocol`` into a temporary folder;
pip installs ``strands-voice`` from them (its other dependencies from the package index) into a new
Python 3.12 venv, run from a folder outside the repository so nothing is imported from the checkout.
There the public API imports, and none of the endpoint's heavy packages came along.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The endpoint's and the torch engine's packages (and the speakers extra's): not in the library's install.
HEAVY = ("torch", "onnxruntime", "kokoro", "misaki", "spacy", "sounddevice")
EXTRAS = {"speakers", "sagemaker", "listen"}

pytestmark = pytest.mark.timeout(600)


def _run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=500)
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library's and the protocol's wheels, built from the workspace."""
    uv = shutil.which("uv")
    assert uv is not None, "uv builds the wheels (pip install uv)"
    dist = tmp_path_factory.mktemp("dist")
    for package in ("strands-voice-protocol", "strands-voice"):
        _run([uv, "build", "--wheel", "--package", package, "--out-dir", str(dist), "--quiet"], ROOT)
    return dist


def test_the_library_wheel_declares_its_extras(wheels: Path) -> None:
    (wheel,) = wheels.glob("strands_voice-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode().splitlines()
    extras = {line.split(":", 1)[1].strip() for line in lines if line.startswith("Provides-Extra:")}
    assert extras >= EXTRAS, extras
    assert "Requires-Dist: sounddevice>=0.5; extra == 'speakers'" in lines


def test_pip_installs_the_library_alone_into_a_fresh_venv(wheels: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _run([sys.executable, "-m", "venv", str(venv)], outside)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    _run([*pip, "--find-links", str(wheels), "strands-voice"], outside)
    probe = (
        "import importlib.util, sys\n"
        "from strands_voice import Speakers, VoiceCallbackHandler\n"
        "import strands_voice\n"
        f"heavy = [m for m in {HEAVY!r} if importlib.util.find_spec(m) is not None]\n"
        "print(sys.version_info[:2], strands_voice.__file__, heavy)\n"
    )
    out = _run([python, "-c", probe], outside)
    version, _, rest = out.strip().partition(")")
    assert version == "(3, 12"
    assert str(venv) in rest and str(ROOT) not in rest, out  # imported from the venv, not the checkout
    assert rest.rstrip().endswith("[]"), f"heavy packages came along: {out}"
