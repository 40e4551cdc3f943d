"""Running a command-line conversation the way its user does: waiting for what it prints, Ctrl-C, and a
readable failure if it hangs."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["ctrl_c", "start_interruptible", "wait_for_output"]


def start_interruptible(command: list[str], **popen_kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``command`` with Ctrl-C at its default, as at a terminal.

    A shell's background job (``./.ci/run &``, a job runner without job control) starts with SIGINT ignored,
    and every process it starts inherits that: Python then installs no Ctrl-C handler, and :func:`ctrl_c`
    would wait on a command that never heard it.
    """
    return subprocess.Popen(command, preexec_fn=_default_ctrl_c, **popen_kwargs)


def _default_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for_output(path: Path, text: str, process: subprocess.Popen[bytes], timeout_s: float) -> None:
    """Wait until the file ``path`` (the process's output) holds ``text``; fail, showing the output, if the
    process exits first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while text not in (output := path.read_text(errors="replace")):
        assert process.poll() is None, f"the command exited early: {output}"
        assert time.monotonic() < deadline, f"the command did not print {text!r}: {output}"
        time.sleep(0.2)


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
