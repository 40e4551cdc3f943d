"""The pitch at the end of an utterance: a small autocorrelation F0 tracker (numpy, sans-I/O).

A finished statement's voice falls at its end, below where the speaker's voice sits; a speaker who pauses
mid-sentence holds the pitch level or lets it rise ("I would like to know, ..."). :func:`final_fall`
gives that cue as one number: the F0 of the last voiced frames against the median F0 of the turn, in
semitones (negative: the voice ended low).

The tracker reads 40 ms frames every 10 ms. A frame is voiced when it is loud enough and its normalized
autocorrelation has a peak at a lag of 60-400 Hz; the peak's lag is its period (refined by a parabola
through the peak). No clock, no I/O: samples in, a number out.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["final_fall", "pitch_track"]

_RATE: Final = 16000
_FRAME: Final = 640  # 40 ms: two periods of a low 60 Hz voice
_HOP: Final = 160  # 10 ms
_F0_MIN: Final = 60.0
_F0_MAX: Final = 400.0
#: A frame is voiced when its autocorrelation peak reaches this (of the frame's energy) ...
_VOICED_PEAK: Final = 0.45
#: ... and its RMS is within this many dB of the loudest frame's.
_VOICED_DB: Final = 35.0
#: The end is the median F0 of this many last voiced frames.
_END_FRAMES: Final = 8
#: The turn's register is the median F0 of the voiced frames of its last seconds.
_REGISTER_S: Final = 4.0
#: Too few voiced frames to say anything.
_MIN_VOICED: Final = 12


def pitch_track(audio: npt.NDArray[np.float32], rate: int = _RATE) -> npt.NDArray[np.float64]:
    """F0 (Hz) of each 10 ms frame of ``audio`` (mono float32), NaN where the frame is not voiced."""
    samples = np.asarray(audio, dtype=np.float64)
    if rate != _RATE or samples.size < _FRAME:
        return np.full(0 if samples.size < _FRAME else samples.size // _HOP, np.nan)
    count = 1 + (samples.size - _FRAME) // _HOP
    index = np.arange(_FRAME)[np.newaxis, :] + _HOP * np.arange(count)[:, np.newaxis]
    frames = samples[index]
    frames = frames - frames.mean(axis=1, keepdims=True)
    energy = np.einsum("ij,ij->i", frames, frames)
    spectrum = np.fft.rfft(frames * np.hanning(_FRAME), n=2 * _FRAME, axis=1)
    acf = np.fft.irfft(np.abs(spectrum) ** 2, axis=1)[:, :_FRAME]
    # Unbias the lags (fewer products at a longer lag) and normalize by the zero lag.
    acf = acf / np.maximum(acf[:, :1], 1e-12) * (_FRAME / (_FRAME - np.arange(_FRAME)))[np.newaxis, :]
    low, high = int(rate / _F0_MAX), int(rate / _F0_MIN)
    window = acf[:, low : high + 1]
    lag = np.argmax(window, axis=1)
    peak = window[np.arange(count), lag]
    lag_f = lag.astype(np.float64) + low + _parabola(window, lag)
    loud = 10 * np.log10(np.maximum(energy, 1e-12))
    voiced = (peak >= _VOICED_PEAK) & (loud >= loud.max() - _VOICED_DB) & (energy > 1e-7 * _FRAME)
    return np.where(voiced, rate / lag_f, np.nan)


def _parabola(window: npt.NDArray[Any], lag: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    """The sub-sample offset of each row's peak from a parabola through it and its neighbours."""
    rows = np.arange(window.shape[0])
    inner = (lag > 0) & (lag < window.shape[1] - 1)
    left = window[rows, np.clip(lag - 1, 0, window.shape[1] - 1)]
    mid = window[rows, lag]
    right = window[rows, np.clip(lag + 1, 0, window.shape[1] - 1)]
    denominator = left - 2 * mid + right
    safe = np.where(np.abs(denominator) > 1e-12, denominator, 1.0)
    offset = np.where(np.abs(denominator) > 1e-12, 0.5 * (left - right) / safe, 0.0)
    return np.where(inner, np.clip(offset, -0.5, 0.5), 0.0)


def final_fall(audio: npt.NDArray[np.float32], rate: int = _RATE) -> float | None:
    """How far the voice ended below the turn's register, in semitones (negative: it fell); None when the
    turn has too few voiced frames to tell (a short "yes" may)."""
    track = pitch_track(audio[-int(_REGISTER_S * rate) :], rate)
    voiced = track[~np.isnan(track)]
    if voiced.size < _MIN_VOICED:
        return None
    # A frame tracked an octave off reads as a fall or a rise of 12 semitones, beyond what a voice does
    # at the end of a turn (a statement falls 3-9): fold those back.
    semitones = 12 * np.log2(voiced / np.median(voiced))
    semitones = np.where(
        semitones > 10, semitones - 12, np.where(semitones < -10.5, semitones + 12, semitones)
    )
    return float(np.median(semitones[-_END_FRAMES:]))
