"""The phone's audio: μ-law at 8 kHz ↔ the call's pcm16 at 16 kHz, streamed (sans-I/O).

In: :class:`PhoneToCall` expands each μ-law byte (:func:`~strands_voice_protocol.audio.g711.mulaw_decode`)
and doubles the rate: zeros between the samples, then the same Kaiser-windowed sinc low-pass the decimator
uses (:func:`~strands_voice_protocol.audio.downsample.lowpass_taps`), so the recognizer gets no images of
the telephone band above 4 kHz. Out: :class:`CallToPhone` decimates 16 kHz to 8 kHz
(:class:`~strands_voice_protocol.audio.downsample.Decimator`) and compands
(:func:`~strands_voice_protocol.audio.g711.mulaw_encode`) (a phone caller made from 16 kHz speech, in
tests and the bench; the answers reach the phone as the ``mulaw`` format, from 24 kHz). Both keep their
filter's history between chunks: a stream cut into 20 ms frames converts as the whole stream would, with
one fixed delay.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from strands_voice_protocol.audio.downsample import Decimator, lowpass_taps
from strands_voice_protocol.audio.g711 import G711_RATE, mulaw_decode, mulaw_encode
from strands_voice_protocol.audio.pcm import float32_to_pcm16, pcm16_to_float32

__all__ = ["CALL_RATE", "PHONE_RATE", "CallToPhone", "PhoneToCall"]

#: The phone's rate (G.711).
PHONE_RATE: Final = G711_RATE
#: The call's rate (what the listener hears).
CALL_RATE: Final = 16_000
_TAPS: Final = 63  # a short filter: the recognizer needs no 80 dB stopband, and the delay stays 2 ms
_CUTOFF_HZ: Final = 3_800.0


class PhoneToCall:
    """μ-law at 8 kHz → pcm16 at 16 kHz, across calls (see the module docstring)."""

    def __init__(self) -> None:
        # Twice the taps: zero-stuffing halves the level, and the filter's DC gain is one.
        self._taps = 2.0 * lowpass_taps(_CUTOFF_HZ, CALL_RATE, _TAPS)
        self._history = np.zeros(_TAPS - 1, dtype=np.float64)

    def convert(self, mulaw: bytes) -> bytes:
        """Convert more of the phone's audio; returns two 16 kHz samples per byte (after the first
        ``(taps - 1) / 2`` output samples of the stream, which are the filter's start)."""
        if not mulaw:
            return b""
        samples = pcm16_to_float32(mulaw_decode(mulaw)).astype(np.float64)
        stuffed = np.zeros(2 * len(samples), dtype=np.float64)
        stuffed[::2] = samples
        buffer = np.concatenate([self._history, stuffed])
        self._history = buffer[-(_TAPS - 1) :]
        return float32_to_pcm16(np.convolve(buffer, self._taps, mode="valid"))


class CallToPhone:
    """pcm16 at 16 kHz → μ-law at 8 kHz, across calls (see the module docstring)."""

    def __init__(self) -> None:
        self._decimator = Decimator(CALL_RATE // PHONE_RATE, CALL_RATE)

    def convert(self, pcm16: bytes) -> bytes:
        """Convert more 16 kHz audio (whole samples); returns one byte per 8 kHz sample completed."""
        return mulaw_encode(self._decimator.process(pcm16_to_float32(pcm16)))

    def flush(self) -> bytes:
        """The last samples the filter held (the stream's end)."""
        return mulaw_encode(self._decimator.flush())
