"""The int8 path the ONNX engine takes on this CPU: chosen once at start-up from its instruction set.

onnxruntime's CPU kernels (MLAS) pick their int8 matrix kernel from the instruction set, per operand types:

- **AVX2** (Haswell to Zen 3): u8 x u8 (the export's ``ConvInteger``) widens one side to 16 bits and
  multiplies with ``vpmaddwd``; u8 x s8 (``MatMulInteger`` with int8 weights) multiplies 32 byte pairs per
  ``vpmaddubsw``, about 1.3x the work per instruction, but adds each pair of products in 16 bits with
  saturation.
- **AVX-512** (BW/DQ/VL, without VNNI: Skylake-SP): the same two kernels on 512-bit registers.
- **AVX-512 VNNI** (Cascade Lake, Ice Lake, Sapphire Rapids, Zen 4 and 5) and **AVX-VNNI** (Alder Lake and
  later client cores): u8 x s8 is ``vpdpbusd``, one instruction, into 32 bits, about twice u8 x u8's
  speed; u8 x u8 keeps the AVX-512 or AVX2 kernel.
- Older x86-64 (SSE only) and ARM64: no u8 x s8 kernel faster than u8 x u8 (ARM64's plan:
  docs/endpoint.md).

So wherever the CPU has AVX2 the engine loads its graphs with the convolutions rewritten as u8 x s8
matrix products (:mod:`.onnx_gemm`), whose weights are checked so that no pair of products can leave 16
bits: the sums are exact with every kernel above, so the audio is the same on each instruction set's
kernel as with the export's ``ConvInteger``. Elsewhere the export runs as it is.

The thread count is the number of physical cores this process may run on (onnxruntime's own default
rule): where two logical CPUs share a core (SMT), a second thread adds little to int8 arithmetic, and
every parallel step of a small window pays to wake and join it.

Settings (environment): ``KOKORO_ONNX_ISA`` forces the instruction set the choice is made for
(``avx2``, ``avx512``, ``avx512_vnni``, ``avx_vnni``, ``x86_64``, ``arm64``: for tests, and for a CPU whose
kernels are emulated, see ``strands_voice_tools.bench.isa``); ``KOKORO_ONNX_CONV_GEMM=0``/``1`` turns the
rewrite off/on whatever the instruction set; ``KOKORO_ONNX_THREADS`` sets the thread count.
"""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = [
    "INSTRUCTION_SETS",
    "CpuPath",
    "choose_cpu_path",
    "cpu_flags",
    "cpu_path",
    "instruction_set",
    "physical_cores",
]

logger = logging.getLogger(__name__)

#: Every instruction set the choice knows, from the fastest int8 kernel down.
INSTRUCTION_SETS: Final = ("avx512_vnni", "avx_vnni", "avx512", "avx2", "x86_64", "arm64", "other")
#: The instruction sets where MLAS multiplies u8 x s8 faster than u8 x u8: there the rewrite pays.
_SIGNED_WEIGHTS_FASTER: Final = frozenset({"avx512_vnni", "avx_vnni", "avx512", "avx2"})
#: The AVX-512 subsets MLAS needs for its 512-bit int8 kernels (``/proc/cpuinfo`` names).
_AVX512_CORE: Final = frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"})
#: numpy's names for the same features (where there is no ``/proc/cpuinfo``: macOS, Windows).
_NUMPY_FLAGS: Final = {
    "AVX2": "avx2",
    "FMA3": "fma",
    "AVX512F": "avx512f",
    "AVX512BW": "avx512bw",
    "AVX512DQ": "avx512dq",
    "AVX512VL": "avx512vl",
    "AVX512VNNI": "avx512_vnni",
    "ASIMDDP": "asimddp",
    "SVE": "sve",
}


@dataclass(frozen=True)
class CpuPath:
    """What the engine runs on this CPU.

    Attributes:
        isa: The instruction set the choice was made for (one of :data:`INSTRUCTION_SETS`).
        forced: Whether ``isa`` was set by ``KOKORO_ONNX_ISA`` rather than read from the CPU.
        conv_gemm: Whether the graphs' convolutions run as u8 x s8 matrix products (:mod:`.onnx_gemm`).
        threads: onnxruntime's intra-op threads per session.
        threads_from: Where ``threads`` came from (``physical cores``, ``KOKORO_ONNX_THREADS``, ...).
    """

    isa: str
    forced: bool
    conv_gemm: bool
    threads: int
    threads_from: str

    def describe(self) -> str:
        """One line for the start-up log."""
        convolutions = "u8 x s8 matrix products" if self.conv_gemm else "as exported (ConvInteger)"
        source = "forced by KOKORO_ONNX_ISA" if self.forced else "detected"
        return (
            f"isa=<{self.isa}> ({source}), convolutions=<{convolutions}>, "
            f"threads=<{self.threads}> ({self.threads_from})"
        )


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags: the ``flags`` (x86) or ``Features`` (ARM) line of ``cpuinfo`` (Linux), else
    numpy's view of them."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    try:  # numpy reads CPUID itself wherever it runs; a private table, so only a fallback
        from numpy._core._multiarray_umath import __cpu_features__  # type: ignore[import-not-found]
    except ImportError:
        return frozenset()
    return frozenset(name for key, name in _NUMPY_FLAGS.items() if __cpu_features__.get(key))


def instruction_set(flags: frozenset[str], machine: str | None = None) -> str:
    """The best int8 instruction set among ``flags`` (one of :data:`INSTRUCTION_SETS`).

    Args:
        flags: The CPU's feature flags (:func:`cpu_flags`).
        machine: ``platform.machine()`` (the default): tells ARM64 and other architectures apart.
    """
    machine = (machine or platform.machine()).lower()
    if machine in ("aarch64", "arm64"):
        return "arm64"
    if machine not in ("x86_64", "amd64"):
        return "other"
    if not {"avx2", "fma"} <= flags:
        return "x86_64"
    if _AVX512_CORE <= flags:
        return "avx512_vnni" if "avx512_vnni" in flags else "avx512"
    return "avx_vnni" if "avx_vnni" in flags else "avx2"


def physical_cores(cpus: set[int] | None = None, sysfs: Path = Path("/sys/devices/system/cpu")) -> int:
    """How many physical cores the logical CPUs ``cpus`` (default: this process's) belong to.

    Two logical CPUs of one core (SMT) count once. Where the topology cannot be read, every logical CPU
    counts.
    """
    if cpus is None:
        try:
            cpus = os.sched_getaffinity(0)
        except AttributeError:  # not on Linux
            cpus = set(range(os.cpu_count() or 1))
    cores = set()
    for cpu in cpus:
        topology = sysfs / f"cpu{cpu}" / "topology"
        try:
            package = (topology / "physical_package_id").read_text(encoding="utf-8").strip()
            core = (topology / "core_id").read_text(encoding="utf-8").strip()
        except OSError:
            return max(1, len(cpus))
        cores.add((package, core))
    return max(1, len(cores))


def choose_cpu_path(isa: str, environ: Mapping[str, str], cores: int, forced: bool = False) -> CpuPath:
    """The path for instruction set ``isa`` and ``cores`` physical cores, under the settings ``environ``.

    Raises:
        ValueError: ``isa`` is not one of :data:`INSTRUCTION_SETS`.
    """
    if isa not in INSTRUCTION_SETS:
        raise ValueError(f"unknown instruction set {isa!r}; one of {', '.join(INSTRUCTION_SETS)}")
    setting = environ.get("KOKORO_ONNX_CONV_GEMM", "auto")
    conv_gemm = setting == "1" or (setting != "0" and isa in _SIGNED_WEIGHTS_FASTER)
    env_threads = environ.get("KOKORO_ONNX_THREADS", "")
    if env_threads.isdigit() and int(env_threads) > 0:
        return CpuPath(isa, forced, conv_gemm, int(env_threads), "KOKORO_ONNX_THREADS")
    return CpuPath(isa, forced, conv_gemm, cores, "physical cores")


def cpu_path(environ: Mapping[str, str] | None = None) -> CpuPath:
    """This CPU's path (``KOKORO_ONNX_ISA`` forces the instruction set it is chosen for).

    Raises:
        ValueError: ``KOKORO_ONNX_ISA`` names no known instruction set.
    """
    environ = os.environ if environ is None else environ
    forced = environ.get("KOKORO_ONNX_ISA", "").strip().lower()
    isa = forced or instruction_set(cpu_flags())
    return choose_cpu_path(isa, environ, physical_cores(), forced=bool(forced))
