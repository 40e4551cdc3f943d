"""Progress on stderr: an animated spinner on a terminal, plain lines otherwise."""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Final

__all__ = ["Progress", "ProgressStep"]


@dataclass
class ProgressStep:
    """A running progress step.

    Attributes:
        detail: A short status shown after the label while the step runs (spinner only).
    """

    detail: str = ""


class Progress:
    """Progress lines on stderr: an animated spinner on a terminal, plain lines otherwise.

    Args:
        stream: Where to write; ``sys.stderr`` by default.
        animate: Spin (True), print plain lines (False) or decide by ``stream.isatty()`` (None).
    """

    _FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, stream: IO[str] | None = None, *, animate: bool | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._animate = self._stream.isatty() if animate is None else animate

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()

    @contextmanager
    def step(self, label: str) -> Iterator[ProgressStep]:
        """Show ``label`` while the block runs, then how long it took (or that it failed).

        The block may set ``detail`` on the yielded :class:`ProgressStep`; the spinner shows it.
        """
        started = time.monotonic()
        stop = threading.Event()
        spinner: threading.Thread | None = None
        current = ProgressStep()
        if self._animate:

            def spin() -> None:
                for frame in itertools.cycle(self._FRAMES):
                    detail = f" · {current.detail}" if current.detail else ""
                    self._write(f"\r\x1b[2K{frame} {label} {time.monotonic() - started:5.1f} s{detail}")
                    if stop.wait(0.1):
                        return

            spinner = threading.Thread(target=spin, name="demo-progress", daemon=True)
            spinner.start()
        else:
            self._write(f"{label} ...\n")
        outcome = "failed"
        try:
            yield current
            outcome = "done"
        finally:
            stop.set()
            if spinner is not None:
                spinner.join(timeout=1.0)
            elapsed = time.monotonic() - started
            mark = "✓" if outcome == "done" else "✗"
            prefix = "\r\x1b[2K" if self._animate else ""
            self._write(f"{prefix}{mark} {label}: {outcome} in {elapsed:.1f} s\n")

    def note(self, text: str) -> None:
        """Print one line."""
        self._write(f"{text}\n")
