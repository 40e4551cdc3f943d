"""Run a process on an older x86-64 instruction set's kernels: AVX2 only, or AVX-512 without VNNI.

onnxruntime (MLAS) picks its int8 kernels from CPUID at start-up. On a Linux x86-64 machine whose kernel
offers CPUID faulting (``cpuid_fault`` in ``/proc/cpuinfo``), :file:`isa_mask.c`, preloaded into a child
process, answers CPUID with the newer instruction sets' bits cleared, so the child runs the kernels of a
CPU without them, at this CPU's speed: the same machine measures every instruction set it can stand in for,
side by side. The child is also told the instruction set (``KOKORO_ONNX_ISA``), so the endpoint chooses the
path it would choose there.

:func:`probe_kernels` checks what the kernels do, from inside a process: a u8 x s8 product whose pairs of
products leave 16 bits comes out saturated on the AVX2 and AVX-512 kernels (``vpmaddubsw``) and exact on
VNNI's. ``python -m strands_voice_tools.bench.isa`` prints it as JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path
from typing import Any, Final

from strands_voice_protocol.errors import StrandsVoiceError

__all__ = ["EMULATED", "emulation_environ", "isa_mask_library", "probe_in_child", "probe_kernels"]

#: The instruction sets a child process can be run on.
EMULATED: Final = ("avx2", "avx512")
#: Set in a child's environment by the preloaded library once CPUID faulting is on.
ACTIVE: Final = "STRANDS_VOICE_EMULATED_ISA_ACTIVE"


def isa_mask_library(cache: Path | None = None) -> Path:
    """The preload library, compiled from :file:`isa_mask.c` once (keyed by its source) with the C compiler.

    Raises:
        StrandsVoiceError: not Linux x86-64, no CPUID faulting, or no C compiler (``cc``).
    """
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise StrandsVoiceError("emulating an instruction set needs Linux on x86-64")
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    if "cpuid_fault" not in cpuinfo.split():
        raise StrandsVoiceError("this CPU or VM offers no CPUID faulting (no cpuid_fault flag)")
    compiler = shutil.which(os.environ.get("CC", "cc"))
    if compiler is None:
        raise StrandsVoiceError("emulating an instruction set needs a C compiler (cc); apt-get install gcc")
    source = files("strands_voice_tools.bench").joinpath("isa_mask.c").read_bytes()
    folder = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "strands_voice"
    library = folder / f"isa_mask.{hashlib.sha256(source).hexdigest()[:16]}.so"
    if library.is_file():
        return library
    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / f"{library.name}.{os.getpid()}.c"
    staged.write_bytes(source)
    try:
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", str(staged), "-o", f"{library}.{os.getpid()}"],
            check=True,
            capture_output=True,
        )
        Path(f"{library}.{os.getpid()}").replace(library)
    except subprocess.CalledProcessError as error:
        raise StrandsVoiceError(
            f"compiling isa_mask.c failed: {error.stderr.decode(errors='replace')}"
        ) from None
    finally:
        staged.unlink(missing_ok=True)
    return library


def emulation_environ(isa: str, cache: Path | None = None) -> dict[str, str]:
    """The environment variables that run a child process on ``isa``'s kernels (one of :data:`EMULATED`).

    ``PYTHONFAULTHANDLER`` is cleared: Python's fault handler would take the SIGSEGV each CPUID raises.

    Raises:
        ValueError: ``isa`` is not one of :data:`EMULATED`.
        StrandsVoiceError: see :func:`isa_mask_library`.
    """
    if isa not in EMULATED:
        raise ValueError(f"can emulate {', '.join(EMULATED)}, not {isa!r}")
    preload = " ".join(filter(None, [str(isa_mask_library(cache)), os.environ.get("LD_PRELOAD", "")]))
    return {
        "LD_PRELOAD": preload,
        "STRANDS_VOICE_EMULATED_ISA": isa,
        "KOKORO_ONNX_ISA": isa,
        "PYTHONFAULTHANDLER": "",
    }


def probe_kernels() -> dict[str, Any]:
    """What this process's int8 kernels and CPU features are (see the module docstring).

    Returns:
        ``u8s8_pairs_saturate`` (True on the AVX2 and AVX-512 kernels, False on VNNI's), numpy's view of
        the CPU's AVX-512 and VNNI features, the instruction set an emulation made this process see (None:
        none), and the path the endpoint's engine chooses in it (``endpoint_cpu_path``).
    """
    import numpy as np
    import onnxruntime as ort  # type: ignore[import-untyped]
    from kokoro_endpoint.engines.onnx.cpu_path import cpu_path
    from numpy._core._multiarray_umath import __cpu_features__  # type: ignore[import-not-found]
    from onnx import TensorProto, helper

    depth = 64
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"])
    graph = helper.make_graph(
        [node],
        "probe",
        [
            helper.make_tensor_value_info("a", TensorProto.UINT8, [None, depth]),
            helper.make_tensor_value_info("b", TensorProto.INT8, [depth, 16]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.INT32, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    # 255 x 127 twice is 64,770: over 16 bits, so a 16-bit pair sum saturates at 32,767.
    product = session.run(
        None, {"a": np.full((4, depth), 255, np.uint8), "b": np.full((depth, 16), 127, np.int8)}
    )
    active = os.environ.get(ACTIVE) == "1"
    return {
        "u8s8_pairs_saturate": bool(product[0][0, 0] != depth * 255 * 127),
        "numpy_features": {
            key: bool(__cpu_features__.get(key)) for key in ("AVX2", "AVX512F", "AVX512BW", "AVX512VNNI")
        },
        "emulated_isa": os.environ.get("STRANDS_VOICE_EMULATED_ISA") if active else None,
        "endpoint_cpu_path": cpu_path().describe(),
    }


def probe_in_child(environ: dict[str, str]) -> dict[str, Any]:
    """:func:`probe_kernels` in a new Python process with ``environ`` added to this one's environment.

    Raises:
        StrandsVoiceError: the process failed.
    """
    done = subprocess.run(
        [sys.executable, "-m", "strands_voice_tools.bench.isa"],
        env={**os.environ, **environ},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise StrandsVoiceError(f"probing the kernels failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


if __name__ == "__main__":
    print(json.dumps(probe_kernels()))
