"""Ending a command-line conversation the way its user does: Ctrl-C, and a readable failure if it hangs."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

__all__ = ["ctrl_c"]


def ctrl_c(process: subprocess.Popen[bytes], stderr: Path, within_s: float = 60.0) -> int:
    """Send SIGINT and return the exit status; a process still running after ``within_s`` is asked for its
    threads' stacks (the ``strands-voice`` command prints them on SIGUSR1), killed, and the test fails
    with its stderr, stacks included."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(within_s)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGUSR1)
        time.sleep(2.0)
        process.kill()
        process.wait(10)
        tail = stderr.read_text(errors="replace")[-20_000:]
        raise AssertionError(f"still running {within_s:.0f} s after Ctrl-C; its stderr:\n{tail}") from None
