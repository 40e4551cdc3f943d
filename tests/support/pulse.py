"""A private PulseAudio server with one null sink: an output device on a machine without sound hardware.

PortAudio (sounddevice) reaches it through ALSA's ``pulse`` plugin (``PULSE_SERVER`` names the server);
``parec`` records the sink's monitor, which is exactly what was played into it. The server runs as a
child of the test (``--daemonize=no``) on a socket in its own directory, so it never meets the machine's
own sound server, and is terminated at the end.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from optional_groups import skip_or_fail

__all__ = ["SINK", "MonitorRecording", "PulseServer", "null_sink_server"]

SINK = "sv_speakers"
RATE = 24_000
COMMANDS = ("pulseaudio", "pactl", "parec")


@dataclass(frozen=True)
class PulseServer:
    """A running server: its ``PULSE_SERVER`` address and where it writes its log."""

    address: str
    log: Path

    def record(self, path: Path) -> MonitorRecording:
        """Start recording the null sink's monitor (24 kHz mono s16le) into ``path``; returns once the
        recording runs."""
        with path.open("wb") as out:
            proc = subprocess.Popen(
                [
                    "parec",
                    f"--server={self.address}",
                    f"--device={SINK}.monitor",
                    "--format=s16le",
                    f"--rate={RATE}",
                    "--channels=1",
                    "--raw",
                    "--latency-msec=20",
                ],
                stdout=out,
                stderr=subprocess.DEVNULL,
            )
        recording = MonitorRecording(proc, path)
        deadline = time.monotonic() + 30
        while len(recording.samples()) < RATE // 10:  # recording for real (the sink's silence counts)
            if proc.poll() is not None or time.monotonic() > deadline:
                recording.stop()
                raise RuntimeError("parec did not start recording the null sink's monitor")
            time.sleep(0.02)
        return recording


@dataclass
class MonitorRecording:
    """A running ``parec``; :meth:`stop` ends it and returns the samples."""

    proc: subprocess.Popen[bytes]
    path: Path

    def samples(self) -> npt.NDArray[np.int16]:
        """What was recorded so far."""
        return np.fromfile(self.path, dtype="<i2")

    def stop(self) -> npt.NDArray[np.int16]:
        """Stop recording; the whole recording."""
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        return self.samples()


def _missing() -> list[str]:
    return [name for name in COMMANDS if shutil.which(name) is None]


@contextmanager
def null_sink_server(ready_timeout_s: float = 20.0) -> Iterator[PulseServer]:
    """Start a private PulseAudio server whose only sink is a null sink; skip (fail under CI) without it."""
    missing = _missing()
    if missing:
        skip_or_fail(
            f"{', '.join(missing)} not found: apt-get install pulseaudio pulseaudio-utils libportaudio2 "
            "(.ci/run installs them)"
        )
    root = Path(tempfile.mkdtemp(prefix="sv-pulse-"))  # short: a socket path has at most 107 bytes
    address = f"unix:{root / 'native'}"
    log = root / "pulseaudio.log"
    env = {"HOME": str(root), "XDG_RUNTIME_DIR": str(root), "PATH": "/usr/bin:/bin"}
    args = [
        "pulseaudio",
        "-n",  # no default script: only the modules below
        "--daemonize=no",
        "--exit-idle-time=-1",
        "--use-pid-file=no",
        "--disable-shm=yes",
        "-L",
        f"module-native-protocol-unix socket={root / 'native'} auth-anonymous=1",
        "-L",
        f"module-null-sink sink_name={SINK} rate={RATE} channels=1 format=s16le",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        _wait_ready(server, address, log, ready_timeout_s)
        yield PulseServer(address, log)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(server: subprocess.Popen[bytes], address: str, log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(
                f"pulseaudio exited with {server.returncode}: {log.read_text(errors='replace')}"
            )
        probe = subprocess.run(
            ["pactl", f"--server={address}", "list", "short", "sinks"], capture_output=True, text=True
        )
        if probe.returncode == 0 and SINK in probe.stdout:
            return
        time.sleep(0.1)
    raise TimeoutError(f"pulseaudio was not ready within {timeout_s} s: {log.read_text(errors='replace')}")
