"""An answer's outlet that can hold: what a speculative answer emits is kept until it is released, and
never emitted if it is dropped first (the caller's turn was not over)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from strands.bidi.types.events import BidiOutputEvent

__all__ = ["HeldOutlet"]


class HeldOutlet:
    """Passes ``strands.bidi`` events on, or keeps them while held.

    Args:
        emit: Where the events go.
        held: Keep every event until :meth:`release`.
    """

    def __init__(self, emit: Callable[[BidiOutputEvent], None], *, held: bool) -> None:
        self._emit = emit
        self._kept: list[BidiOutputEvent] | None = [] if held else None
        self._silent = False
        self.released = asyncio.Event()  # set once events go out (at once when not held)
        if not held:
            self.released.set()

    @property
    def held(self) -> bool:
        """Whether events are being kept (not yet released, not silenced)."""
        return self._kept is not None and not self._silent

    def __call__(self, event: BidiOutputEvent) -> None:
        """One event: out now, kept while held, or gone once silenced."""
        if self._silent:
            return
        if self._kept is not None:
            self._kept.append(event)
        else:
            self._emit(event)

    def release(self) -> None:
        """What was kept goes out, in order; later events go out at once."""
        kept, self._kept = self._kept, None
        if kept is None or self._silent:
            return
        for event in kept:
            self._emit(event)
        self.released.set()

    def silence(self) -> bool:
        """Dropped while held: nothing kept goes out, nor anything later. Returns whether it was held."""
        if self._kept is None:
            return False
        self._silent, self._kept = True, []
        return True
