"""The ONNX engine on the AVX2 and AVX-512 kernels, emulated on this CPU (``strands_voice_tools.bench.isa``).

There MLAS adds each pair of u8 x s8 products in 16 bits with saturation (``vpmaddubsw``): the convolutions'
rewrite must leave out every convolution whose pairs could leave 16 bits, and the engine's audio must stay
the exported graph's, sample for sample. The emulation needs Linux x86-64 with CPUID faulting and a C
compiler; without them the test skips (fails under CI) saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from optional_groups import skip_or_fail
from strands_voice_protocol.errors import StrandsVoiceError
from strands_voice_tools.bench.isa import EMULATED, emulation_environ

CHECK = Path(__file__).resolve().parent / "isa_kernels_check.py"  # run as a script: beside its user


@pytest.mark.parametrize("isa", EMULATED)
def test_the_engine_speaks_the_exported_graphs_samples_on_older_kernels(isa: str) -> None:
    try:
        emulated = emulation_environ(isa)
    except StrandsVoiceError as error:
        skip_or_fail(f"cannot emulate {isa} here: {error}")
    environ = {**os.environ, **emulated}
    done = subprocess.run(
        [sys.executable, str(CHECK)], env=environ, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    # The emulation took: numpy sees the older CPU, and the u8 x s8 kernel saturates its pair sums.
    assert report["probe"]["emulated_isa"] == isa and report["probe"]["u8s8_pairs_saturate"]
    assert report["probe"]["numpy_features"]["AVX512VNNI"] is False
    assert report["probe"]["numpy_features"]["AVX512F"] is (isa == "avx512")
    assert all(report["convolutions"].values()), report["convolutions"]
    assert report["engine"]["conv_gemm"] and f"isa=<{isa}> (forced" in report["engine"]["path"]
    assert all(report["engine"]["same_audio"].values()), report["engine"]
