"""Describe the machine a benchmark ran on, so its figures can be read in context."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

__all__ = [
    "cpu_instruction_set",
    "cpu_model",
    "describe_machine",
    "load_average",
    "package_version",
    "total_memory_gib",
]

#: The CPU flags an int8 kernel's speed depends on (x86-64 and ARM64 names, as ``/proc/cpuinfo`` has them).
INT8_FLAGS = frozenset(
    {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx_vnni_int8", "amx_int8"}
    | {"asimddp", "i8mm", "sve", "sve2"}
)


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), or what the platform module knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def cpu_instruction_set() -> dict[str, Any]:
    """The CPU's instruction set as the endpoint's ONNX engine reads it (``isa``: ``avx2``, ``avx512``,
    ``avx512_vnni``, ...), its int8-relevant flags, its physical cores, and the instruction set this
    process's CPUID is masked to (``emulated_isa``, :mod:`strands_voice_tools.bench.isa`; None: none)."""
    from kokoro_endpoint.engines.onnx.cpu_path import cpu_flags, instruction_set, physical_cores

    flags = cpu_flags()
    return {
        "isa": instruction_set(flags),
        "int8_flags": sorted(flags & INT8_FLAGS),
        "physical_cores": physical_cores(),
        "emulated_isa": os.environ.get("STRANDS_VOICE_EMULATED_ISA")
        if os.environ.get("STRANDS_VOICE_EMULATED_ISA_ACTIVE") == "1"
        else None,
    }


def total_memory_gib() -> float | None:
    """Total RAM in GiB (from /proc/meminfo or sysconf), or None when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / (1024 * 1024), 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1)
    except (AttributeError, ValueError, OSError):
        return None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the OS has none."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def package_version(name: str) -> str | None:
    """An installed distribution's version, or None when it is not installed."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def describe_machine(engine: Any | None = None) -> dict[str, Any]:
    """What the figures depend on: CPU (model and instruction set), cores, RAM, Python, onnxruntime and the
    TTS engine (with the int8 path it chose on this CPU).

    Args:
        engine: The TTS engine in use (its ``name``, ``default_voice`` and ``cpu_path`` are recorded), if
            any.

    Returns:
        A JSON-ready mapping.
    """
    try:
        usable_cores: int | None = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cores = None
    return {
        "cpu_model": cpu_model(),
        "cpu_isa": cpu_instruction_set(),
        "cpu_cores": os.cpu_count(),
        "usable_cores": usable_cores,
        "ram_gib": total_memory_gib(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "onnxruntime": package_version("onnxruntime"),
        "strands_voice": package_version("strands-voice"),
        "engine": None if engine is None else str(getattr(engine, "name", type(engine).__name__)),
        "voice": None if engine is None else getattr(engine, "default_voice", None),
        "engine_cpu_path": _engine_cpu_path(engine),
        "load_average_start": load_average(),
    }


def _engine_cpu_path(engine: Any | None) -> str | None:
    """The int8 path the engine chose (the ONNX engine's ``cpu_path``), None for others."""
    path = getattr(engine, "cpu_path", None)
    return None if path is None else str(path.describe())
