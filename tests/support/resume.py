"""Seamless resume against the REAL endpoint process (tests/reliability over WebSocket, tests/strands_voice
over the SageMaker transport): speak one long sentence, SIGKILL the endpoint at its first audio, restart it,
and compare what a naive player plays (every ``AudioChunk``, in order) with an undisturbed run.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import numpy as np

from strands_voice.session._driver import TTSSession
from strands_voice.session._events import AudioChunk, RequestCompleted, RequestRestarted, SessionEvent
from strands_voice.session._retry import RetryPolicy
from strands_voice.transports._base import FrameTransport
from support.endpoint_process import EndpointProcess

#: One long sentence: several engine segments, so a kill at the first audio lands mid-sentence.
SENTENCE = "The quick brown fox jumps over the lazy dog, then it runs along the river bank to the forest."
#: The issue's tolerance: samples may differ within 20 ms of the seam (none do for the ONNX engine).
SEAM_WINDOW_SAMPLES = 480


def run[T](coro: Coroutine[Any, Any, T], timeout: float) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(timeout):
            return await coro

    return asyncio.run(bounded())


@dataclass
class Spoken:
    """One request spoken through a session: its events, the PCM a naive player plays, reconnects."""

    events: list[SessionEvent]
    reconnects: int
    delivered_at_fault: int | None = None

    @property
    def pcm(self) -> bytes:
        return b"".join(e.data for e in self.events if isinstance(e, AudioChunk))


async def speak(transport: FrameTransport, fault: Callable[[], None] | None = None) -> Spoken:
    """Speak :data:`SENTENCE`; ``fault()`` runs (blocking the loop) at the first audio chunk."""
    # The restarted process loads its model before it answers: a generous outage budget.
    retry = RetryPolicy(deadline_s=300.0)
    async with TTSSession(transport, silence_timeout=120.0, retry=retry) as session:
        await session.synthesize(SENTENCE)
        await session.finish()
        spoken = Spoken(events=[], reconnects=0)
        async for event in session:
            spoken.events.append(event)
            if fault is not None and spoken.delivered_at_fault is None and isinstance(event, AudioChunk):
                spoken.delivered_at_fault = len(event.data)
                fault()
        spoken.reconnects = session.reconnects
        return spoken


def kill_and_restart(endpoint: EndpointProcess) -> Callable[[], None]:
    """SIGKILL the endpoint (no close frame: the socket is reset), start it again on the same port.

    Run inside the session's loop, so the session reconnects only once the new process answers ``/ping``.
    """

    def fault() -> None:
        endpoint.kill()
        endpoint.start()

    return fault


def resumed_skip_samples(records: list[logging.LogRecord]) -> list[int]:
    """The ``skip_samples`` the session resumed with, from its debug log."""
    found = []
    for record in records:
        match = re.search(r"skip_samples=<(\d+)> \| resuming at a sample", record.getMessage())
        if match:
            found.append(int(match.group(1)))
    return found


def differing_samples(reference: bytes, heard: bytes) -> np.ndarray[Any, np.dtype[np.intp]]:
    """Indices of the samples where ``heard`` differs from ``reference`` (same length asserted)."""
    assert len(heard) == len(reference), (len(heard), len(reference))
    a = np.frombuffer(reference, dtype="<i2")
    b = np.frombuffer(heard, dtype="<i2")
    return np.flatnonzero(a != b)


def check_seamless(reference: Spoken, resumed: Spoken, skip_samples: list[int]) -> int:
    """The resumed run plays the reference's PCM sample for sample except within 20 ms of the seam.

    Returns:
        How many samples differ (0 for a bit-exact engine).
    """
    assert reference.reconnects == 0 and resumed.reconnects == 1
    assert not any(isinstance(e, RequestRestarted) for e in resumed.events), "replayed, not resumed"
    assert len(skip_samples) == 1 and skip_samples[0] > 0, skip_samples
    seam = skip_samples[0]
    # Mid-sentence: audio had been delivered, and most of the sentence was still to come.
    assert 0 < seam < len(reference.pcm) // 2 // 2
    differ = differing_samples(reference.pcm, resumed.pcm)
    assert all(abs(int(i) - seam) <= SEAM_WINDOW_SAMPLES for i in differ), (seam, differ[:10])
    completed = [e for e in resumed.events if isinstance(e, RequestCompleted)]
    assert len(completed) == 1 and completed[0].audio_bytes == len(resumed.pcm)
    return len(differ)
