"""``bench.isa``: a child process on the AVX2 or AVX-512 kernels, and every benchmark's machine record of
the CPU's instruction set."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import pytest
from kokoro_endpoint.engines.onnx.cpu_path import INSTRUCTION_SETS
from optional_groups import skip_or_fail
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_tools.bench import add_arguments, isa
from strands_voice_tools.bench.peers import PeersConfig, bench_peers
from strands_voice_tools.bench.report import format_machine
from strands_voice_tools.machine import describe_machine


def test_the_machine_record_names_the_instruction_set() -> None:
    machine = describe_machine()
    assert machine["cpu_isa"]["isa"] in INSTRUCTION_SETS
    assert set(machine["cpu_isa"]["int8_flags"]) <= {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni"} | {
        "avx_vnni",
        "avx_vnni_int8",
        "amx_int8",
        "asimddp",
        "i8mm",
        "sve",
        "sve2",
    }
    assert machine["cpu_isa"]["physical_cores"] >= 1 and machine["cpu_isa"]["emulated_isa"] is None
    assert f"({machine['cpu_isa']['isa']})" in format_machine(machine)
    emulated = {**machine, "kernels": {"emulated_isa": "avx2"}}
    assert f"(avx2 kernels on {machine['cpu_isa']['isa']})" in format_machine(emulated)


def test_only_the_older_instruction_sets_are_emulated() -> None:
    with pytest.raises(ValueError, match="avx512_vnni"):
        isa.emulation_environ("avx512_vnni")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["--peers", "--isa", "avx2"]).isa == "avx2"
    with pytest.raises(SystemExit):
        parser.parse_args(["--peers", "--isa", "sse"])


def test_this_cpus_kernels_unmasked() -> None:
    kernels = isa.probe_in_child({})
    assert kernels["emulated_isa"] is None
    assert "(detected)" in kernels["endpoint_cpu_path"]
    # Saturating pair sums are the AVX2 and AVX-512 kernels'; VNNI adds into 32 bits.
    assert kernels["u8s8_pairs_saturate"] is not kernels["numpy_features"]["AVX512VNNI"]


@pytest.mark.parametrize("name", isa.EMULATED)
def test_a_child_sees_the_older_cpu(name: str) -> None:
    try:
        environ = isa.emulation_environ(name)
    except StrandsVoiceError as error:
        skip_or_fail(f"cannot emulate {name} here: {error}")
    kernels = isa.probe_in_child(environ)
    assert kernels["emulated_isa"] == name and kernels["u8s8_pairs_saturate"]
    assert kernels["numpy_features"] == {
        "AVX2": True,
        "AVX512F": name == "avx512",
        "AVX512BW": name == "avx512",
        "AVX512VNNI": False,
    }
    assert f"isa=<{name}> (forced by KOKORO_ONNX_ISA)" in kernels["endpoint_cpu_path"]


def test_peers_refuse_an_emulation_that_did_not_take(monkeypatch: pytest.MonkeyPatch) -> None:
    def unmasked(environ: dict[str, str]) -> dict[str, Any]:
        return {"emulated_isa": None, "endpoint_cpu_path": "isa=<avx512_vnni> (detected)"}

    monkeypatch.setattr(isa, "emulation_environ", lambda name: {"STRANDS_VOICE_EMULATED_ISA": name})
    monkeypatch.setattr(isa, "probe_in_child", unmasked)
    with pytest.raises(StrandsVoiceError, match="the avx2 emulation did not take"):
        asyncio.run(bench_peers(PeersConfig(isa="avx2"), lambda line: None, argv=["bench"]))
