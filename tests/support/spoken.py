"""Spoken audio for the listening tests: the real Kokoro engine's speech at 16 kHz, and real-time feeding."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from strands_voice_protocol.audio import float32_to_pcm16
from strands_voice_protocol.audio.resample import resample_linear

__all__ = [
    "LISTEN_RATE",
    "espeak_16k",
    "feed_realtime",
    "feed_settled",
    "silence",
    "speak_16k",
    "trimmed",
]

LISTEN_RATE = 16000
VOICE = "jm_kumo"  # the English-speaking voice of the offline packs


def speak_16k(engine: Any, text: str, speed: float = 1.0, voice: str = VOICE) -> bytes:
    """``text`` spoken by the endpoint's engine in ``voice``, as PCM16 mono at 16 kHz, read in the language
    the endpoint would read it in (Japanese text under a Japanese voice)."""
    from kokoro_endpoint.reading.languages import Reading, request_language

    reading = Reading(lang=request_language(None, voice, text))
    audio = np.concatenate(list(engine.synthesize(text, voice, speed, reading)))
    return resample_linear(float32_to_pcm16(audio), engine.sample_rate, LISTEN_RATE)


def espeak_16k(text: str, voice: str) -> bytes:
    """``text`` spoken by espeak-ng's ``voice`` (``es``, ``fr``, ...), as PCM16 mono at 16 kHz (the apt
    package ``espeak-ng``: it speaks every language Kokoro does, in a voice no test tuned for)."""
    import shutil
    import subprocess

    from optional_groups import skip_or_fail
    from strands_voice_protocol.audio.wav import wav_to_pcm16

    binary = shutil.which("espeak-ng")
    if binary is None:
        skip_or_fail("espeak-ng is not installed: apt-get install espeak-ng (.ci/run installs it)")
    wav = subprocess.run([binary, "-v", voice, "--stdout", text], check=True, capture_output=True).stdout
    return resample_linear(wav_to_pcm16(wav), 24000, LISTEN_RATE)  # wav_to_pcm16 gives 24 kHz


def trimmed(pcm16: bytes, floor: int = 300) -> bytes:
    """``pcm16`` without its leading and trailing near-silence (samples under ``floor``): the engine pads
    each utterance with about 0.35 s before and 0.5 s after, which a test's own pauses must not add to."""
    samples = np.frombuffer(pcm16, np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) >= floor)
    if loud.size == 0:
        return b""
    return samples[loud[0] : loud[-1] + 1].tobytes()


def silence(seconds: float) -> bytes:
    """PCM16 silence at 16 kHz."""
    return bytes(2 * round(seconds * LISTEN_RATE))


async def feed_realtime(
    pcm16: bytes, feed: Callable[[bytes], Awaitable[None]], *, frame_s: float = 0.02, speed: float = 1.0
) -> None:
    """Hand ``pcm16`` (16 kHz) to ``feed`` in ``frame_s`` frames, paced at real time (``speed`` x)."""
    step = 2 * round(frame_s * LISTEN_RATE)
    start = time.perf_counter()
    for index, offset in enumerate(range(0, len(pcm16), step)):
        await feed(pcm16[offset : offset + step])
        due = start + (index + 1) * frame_s / speed
        await asyncio.sleep(max(0.0, due - time.perf_counter()))


async def feed_settled(pcm16: bytes, listener: Any, *, frame_s: float = 0.032) -> None:
    """Hand ``pcm16`` to ``listener`` frame by frame, each once its judgments and recognitions are done:
    the verdicts of an infinitely fast machine, whatever the load (the latency is the bench's to measure)."""
    step = 2 * round(frame_s * LISTEN_RATE)
    for offset in range(0, len(pcm16), step):
        await listener.feed(pcm16[offset : offset + step])
        await listener.settle()
