"""When the first audible sound of a pcm16 stream plays (what a listener hears, not when bytes arrive).

Time to first byte says when audio starts arriving; a TTS segment usually begins with silence, so the
listener hears something later. :class:`FirstHeard` follows a pcm16 stream as it arrives and says when its
first audible sound would play: the first 10 ms window above -40 dBFS, on a player that starts with the
first byte and plays in real time (waiting, when the buffer runs dry, for the next chunk). The library's
answer spans and the tools' bench and demo all measure "first heard sound" with it.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt

from strands_voice_protocol.audio.pcm import pcm16_to_float32

__all__ = [
    "AUDIBLE_DBFS",
    "AUDIBLE_WINDOW_S",
    "FirstHeard",
    "first_audible_sample",
    "pcm16_to_float",
]

#: A 10 ms window louder than this (RMS, dB relative to full scale) is audible.
AUDIBLE_DBFS: Final = -40.0
#: The analysis window.
AUDIBLE_WINDOW_S: Final = 0.010


def pcm16_to_float(pcm: bytes) -> npt.NDArray[np.float32]:
    """Little-endian 16-bit PCM as float32 samples in [-1, 1); a trailing half sample is left out."""
    return pcm16_to_float32(pcm[: len(pcm) - len(pcm) % 2])


def first_audible_sample(
    samples: npt.NDArray[np.float32],
    sample_rate: int,
    threshold_dbfs: float = AUDIBLE_DBFS,
    window_s: float = AUDIBLE_WINDOW_S,
) -> int | None:
    """Index of the first sample of the first window whose RMS is above ``threshold_dbfs``.

    Windows are consecutive and start at sample 0; a trailing partial window is not judged.

    Args:
        samples: Mono float samples, full scale 1.0.
        sample_rate: Samples per second.
        threshold_dbfs: The audibility threshold.
        window_s: The window length.

    Returns:
        The window's first sample index, or None when no whole window is audible.
    """
    window = max(1, round(sample_rate * window_s))
    whole = len(samples) // window
    if whole == 0:
        return None
    frames = np.asarray(samples[: whole * window], dtype=np.float64).reshape(whole, window)
    power = np.mean(frames * frames, axis=1)
    loud = np.flatnonzero(power > 10.0 ** (threshold_dbfs / 10.0))
    return int(loud[0]) * window if loud.size else None


class FirstHeard:
    """Follows one pcm16 stream as it arrives; says when its first audible sound would be heard.

    Args:
        sample_rate: The stream's sample rate (mono 16-bit).
        threshold_dbfs: The audibility threshold.
        window_s: The analysis window.
    """

    def __init__(
        self, sample_rate: int, threshold_dbfs: float = AUDIBLE_DBFS, window_s: float = AUDIBLE_WINDOW_S
    ) -> None:
        self._rate = sample_rate
        self._threshold = threshold_dbfs
        self._window = max(1, round(sample_rate * window_s))
        self._pending = bytearray()  # bytes not yet judged (less than one window, or before the sound)
        self._judged = 0  # samples already judged silent
        self._played_until: float | None = None  # when the player will have played everything received
        self._received_s = 0.0  # seconds of audio received
        self._chunks: list[tuple[float, float]] = []  # (play start, audio offset) of each chunk
        self._offset_s: float | None = None
        self._heard_at: float | None = None

    @property
    def first_byte_at(self) -> float | None:
        """Arrival time of the first audio byte, or None before any."""
        return self._chunks[0][0] if self._chunks else None

    @property
    def sound_offset_s(self) -> float | None:
        """Where, in the stream's audio, the first audible sound begins (seconds), once found."""
        return self._offset_s

    @property
    def heard_at(self) -> float | None:
        """When the first audible sound plays (on the arrival clock), or None until it has arrived."""
        return self._heard_at

    def feed(self, arrival: float, pcm: bytes) -> float | None:
        """Take one chunk of the stream, with its arrival time (any clock, seconds).

        Returns:
            :attr:`heard_at` (None until the first audible sound has arrived).
        """
        if not pcm:
            return self._heard_at
        start = arrival if self._played_until is None else max(arrival, self._played_until)
        self._chunks.append((start, self._received_s))
        seconds = len(pcm) / 2 / self._rate
        self._received_s += seconds
        self._played_until = start + seconds
        if self._heard_at is None:
            self._pending.extend(pcm)
            self._scan()
        return self._heard_at

    def _scan(self) -> None:
        samples = pcm16_to_float(bytes(self._pending))
        found = first_audible_sample(samples, self._rate, self._threshold, self._window / self._rate)
        if found is None:
            whole = len(samples) // self._window * self._window
            del self._pending[: whole * 2]
            self._judged += whole
            return
        offset = (self._judged + found) / self._rate
        self._offset_s = offset
        # The chunk holding that sample: its play start plus how far into it the sound is.
        for start, chunk_offset in reversed(self._chunks):
            if chunk_offset <= offset + 1e-12:
                self._heard_at = start + (offset - chunk_offset)
                return
        self._heard_at = math.nan  # unreachable: the first chunk starts at offset 0
