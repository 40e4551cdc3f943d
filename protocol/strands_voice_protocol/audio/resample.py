"""Linear-interpolation resampling of pcm16 to the wire rate (for WAV input at another rate)."""

from __future__ import annotations

import numpy as np

from strands_voice_protocol.audio.pcm import SAMPLE_RATE, float32_to_pcm16, pcm16_to_float32

__all__ = ["resample_linear"]


def resample_linear(pcm: bytes, rate: int, to_rate: int = SAMPLE_RATE) -> bytes:
    """Mono s16le ``pcm`` at ``rate`` Hz → s16le at ``to_rate`` Hz, by linear interpolation.

    Good enough for checking and playing back speech; not a band-limited resampler.

    Raises:
        AudioEncodingError: ``pcm`` is not whole samples.
    """
    samples = pcm16_to_float32(pcm)
    if not len(samples):
        return b""
    count = round(len(samples) * to_rate / rate)
    positions = np.linspace(0, len(samples) - 1, count)
    return float32_to_pcm16(np.interp(positions, np.arange(len(samples)), samples))
