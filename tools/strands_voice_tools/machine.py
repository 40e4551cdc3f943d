"""Describe the machine a benchmark ran on, so its figures can be read in context."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from pathlib import Path
from typing import Any

__all__ = [
    "cpu_model",
    "describe_machine",
    "instruction_set",
    "load_average",
    "package_version",
    "total_memory_gib",
]


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


#: The vector extensions that decide how fast int8 models run, widest first (``/proc/cpuinfo`` flag, name).
_VECTOR_SETS = (
    ("amx_int8", "AMX-INT8"),
    ("avx512_vnni", "AVX-512 VNNI"),
    ("avx512f", "AVX-512"),
    ("avx_vnni", "AVX-VNNI"),
    ("avx2", "AVX2"),
    ("neon", "NEON"),
    ("asimd", "NEON"),
)


def instruction_set() -> str:
    """The CPU's widest vector extension that matters for int8 inference (e.g. "AVX-512 VNNI", "AVX2")."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.machine() or "unknown"
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return next((name for flag, name in _VECTOR_SETS if flag in flags), platform.machine() or "unknown")


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
    """What the figures depend on: CPU, cores, RAM, Python, onnxruntime and the TTS engine.

    Args:
        engine: The TTS engine in use (its ``name`` and ``default_voice`` are recorded), if any.

    Returns:
        A JSON-ready mapping.
    """
    try:
        usable_cores: int | None = len(os.sched_getaffinity(0))
    except AttributeError:
        usable_cores = None
    return {
        "cpu_model": cpu_model(),
        "instruction_set": instruction_set(),
        "cpu_cores": os.cpu_count(),
        "usable_cores": usable_cores,
        "ram_gib": total_memory_gib(),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "onnxruntime": package_version("onnxruntime"),
        "strands_voice": package_version("strands-voice"),
        "engine": None if engine is None else str(getattr(engine, "name", type(engine).__name__)),
        "voice": None if engine is None else getattr(engine, "default_voice", None),
        "load_average_start": load_average(),
    }
