"""``--device``: the GPU image fails loudly at start-up without a GPU; ``/ping`` says what runs where."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from kokoro_endpoint import cli
from kokoro_endpoint.engines.device import NoGpuError, check_device, engine_for_device
from kokoro_endpoint.serving.runner import RunningServer
from kokoro_endpoint.settings import Settings
from optional_groups import skip_or_fail


def fake_torch(available: bool, cuda: str | None = "12.6") -> Any:
    return SimpleNamespace(
        __version__="2.15.0+cu126",
        version=SimpleNamespace(cuda=cuda),
        cuda=SimpleNamespace(is_available=lambda: available, get_device_name=lambda index: "NVIDIA A10G"),
    )


def test_engine_for_device() -> None:
    assert engine_for_device("auto", "cuda") == "torch"  # only the torch engine runs on a GPU
    assert engine_for_device("torch", "cuda") == "torch"
    assert engine_for_device("auto", "auto") == "auto" and engine_for_device("onnx", "cpu") == "onnx"
    with pytest.raises(ValueError, match="onnx engine runs on the CPU"):
        engine_for_device("onnx", "cuda")
    with pytest.raises(ValueError, match="device must be"):
        engine_for_device("auto", "gpu")
    with pytest.raises(ValueError, match="device"):
        Settings(device="gpu")
    assert Settings(device="cuda").torch_device == "cuda" and Settings().torch_device is None


def test_check_device_fails_loudly_without_a_gpu() -> None:
    assert check_device("auto", fake_torch(False)) is None
    assert check_device("cpu", fake_torch(False)) == "cpu"
    assert check_device("cuda", fake_torch(True)) == "cuda"
    with pytest.raises(
        NoGpuError, match=r"no GPU is visible to torch 2\.15\.0\+cu126 \(built for CUDA 12\.6\)"
    ):
        check_device("cuda", fake_torch(False))
    with pytest.raises(NoGpuError, match="CPU-only build"):
        check_device("cuda", fake_torch(False, cuda=None))


def _gpu_visible() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def test_cli_device_cuda_without_a_gpu_exits_1_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    if _gpu_visible():
        skip_or_fail("a GPU is visible here: --device cuda would start serving")
    assert cli.main(["--device", "cuda", "--port", "0"]) == 1
    err = capsys.readouterr().err
    # Without torch installed the same line says to install it; with torch, that no GPU is visible.
    assert err.startswith("kokoro-endpoint: error: --device cuda") and err.count("\n") == 1, err


def test_cli_device_cuda_with_the_onnx_engine_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--device", "cuda", "--engine", "onnx"])
    assert exit_info.value.code == 2
    assert "kokoro-endpoint: error: --device cuda needs --engine torch" in capsys.readouterr().err


def test_cli_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli.build_parser().parse_args(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == "kokoro-endpoint 0.1.0"


def test_ping_reports_engine_device_and_model(endpoint_server: RunningServer) -> None:
    assert httpx.get(f"{endpoint_server.base_url}/ping", timeout=30).json() == {
        "status": "ok",
        "engine": "onnx",
        "device": "cpu",
        "model": "Kokoro-82M int8 ONNX",
    }
