"""Admission control: whether one more listener can be kept fed without starving the admitted ones.

A pure rule (no clock, no lock): the scheduler hands it the engine's measured load and a snapshot of the
listeners it is feeding. Two conditions, both from what this machine measured:

- **rate**: with ``load`` the compute seconds the engine spends per second of audio (measured at start-up
  by :func:`kokoro_endpoint.scheduling.calibration.measure_load` and then by every real step) and ``n`` the
  engaged listeners, ``(n + 1) x load <= max_load x workers``: the workers can produce real-time audio for
  all of them with ``1 - max_load`` to spare;
- **headroom**: every listener being synthesized for has at least ``min_buffer_s`` of audio left to hear.
  A newcomer's first step runs at once (the opening lane pauses the running step, which then runs again
  whole), so the admitted ones must be able to wait for it; one whose buffer is thinner (its own first
  second, or a stall) would hear a gap because of the newcomer.

A listener is engaged while one of its requests is being synthesized, and afterwards while the audio
made for it still plays plus ``hold_s`` (the next sentence of a streamed answer comes from the LLM while
the previous one plays; refusing it mid-answer would be the stall admission exists to prevent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from strands_voice_protocol.errors import ConfigurationError

__all__ = ["DEFAULT_HOLD_S", "DEFAULT_MAX_LOAD", "DEFAULT_MIN_BUFFER_S", "AdmissionRule", "Engaged"]

#: The share of the workers' time the admitted listeners may need (the rest absorbs a newcomer's first
#: step, the windows' uneven cost and the machine's other work).
DEFAULT_MAX_LOAD: Final = 0.8
#: Audio each listener being synthesized for must have left before a newcomer's first step may run: about
#: one full decoder window's compute on a 2-core CPU plus the newcomer's first window.
DEFAULT_MIN_BUFFER_S: Final = 1.5
#: How long a listener whose audio ran out still counts (the gap between two sentences of one answer).
DEFAULT_HOLD_S: Final = 1.0


@dataclass(frozen=True, slots=True)
class Engaged:
    """One engaged listener, as the rule sees it.

    Attributes:
        synthesizing: One of its requests is being synthesized now.
        buffered_s: Seconds of audio it has left to hear.
    """

    synthesizing: bool
    buffered_s: float


@dataclass(frozen=True, slots=True)
class AdmissionRule:
    """When a new listener is admitted (see the module docstring).

    Attributes:
        max_load: The share of the workers' time the listeners may need; None turns admission off.
        workers: The scheduler's workers (model calls at once).
        min_buffer_s: Audio each listener being synthesized for must have left.
    """

    max_load: float | None
    workers: int = 1
    min_buffer_s: float = DEFAULT_MIN_BUFFER_S

    def __post_init__(self) -> None:
        if self.max_load is not None and self.max_load <= 0:
            raise ConfigurationError("admission_max_load must be positive or None")
        if self.workers < 1 or self.min_buffer_s < 0:
            raise ConfigurationError("need workers >= 1 and min_buffer_s >= 0")

    def listeners_fed(self, load: float) -> int | None:
        """How many listeners the rate condition admits at ``load`` (None: unbounded: off, or unmeasured)."""
        if self.max_load is None or load <= 0:
            return None
        return int(self.max_load * self.workers / load + 1e-9)

    def reason(self, load: float, engaged: Sequence[Engaged]) -> str | None:
        """Why a new listener is refused now, or None when it is admitted.

        Args:
            load: Compute seconds per second of audio (0: nothing measured: the rate condition admits).
            engaged: The engaged listeners (the newcomer not among them).
        """
        if self.max_load is None or not engaged:
            return None  # no one to protect: refusing helps no one
        fed = self.listeners_fed(load)
        if fed is not None and len(engaged) + 1 > fed:
            return f"the engine feeds {fed} listener(s) in real time here and {len(engaged)} are listening"
        if any(item.synthesizing and item.buffered_s < self.min_buffer_s for item in engaged):
            return "a listener has too little audio left to wait for a newcomer's first step"
        return None
