"""G.711 (``mulaw``, ``alaw``): companding checked against FFmpeg's codecs, band-limited decimation,
streaming."""

from __future__ import annotations

from typing import Any

import av
import numpy as np
import numpy.typing as npt
import pytest
from strands_voice_protocol.audio import (
    AUDIO_FORMATS,
    G711_RATE,
    MIME_TYPES,
    create_encoder,
    decode_audio,
    float32_to_pcm16,
    pcm16_to_float32,
)
from strands_voice_protocol.audio.downsample import Decimator
from strands_voice_protocol.audio.g711 import alaw_encode, mulaw_encode

RATE = 24_000


def tone(hz: float, seconds: float, rate: int = RATE, amplitude: float = 0.5) -> npt.NDArray[np.float32]:
    t = np.arange(round(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def ffmpeg_compand(codec_name: str, samples: npt.NDArray[np.int16]) -> bytes:
    """FFmpeg's own G.711 encoder on 16-bit samples (an independent implementation)."""
    codec: Any = av.CodecContext.create(codec_name, "w")
    codec.sample_rate = G711_RATE
    codec.format = "s16"
    codec.layout = "mono"
    frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = G711_RATE
    return b"".join(bytes(packet) for packet in [*codec.encode(frame), *codec.encode(None)])


def ffmpeg_decode(codec_name: str, data: bytes) -> npt.NDArray[np.int64]:
    codec: Any = av.CodecContext.create(codec_name, "r")
    codec.sample_rate = G711_RATE
    codec.layout = "mono"
    return np.concatenate([frame.to_ndarray().reshape(-1) for frame in codec.decode(av.Packet(data))]).astype(
        np.int64
    )


@pytest.mark.parametrize(("name", "compand"), [("pcm_mulaw", mulaw_encode), ("pcm_alaw", alaw_encode)])
def test_core_g711_companding_agrees_with_ffmpeg_on_every_16_bit_value(name: str, compand: Any) -> None:
    values = np.arange(-32767, 32768, dtype=np.int64)  # float32 in [-1, 1] reaches -32767 at most
    ours = compand(values / 32767.0)
    assert len(ours) == len(values)
    # FFmpeg picks the nearest level; the reference g711.c (ours) the interval holding the value: the
    # same code except at interval edges.
    theirs = ffmpeg_compand(name, values.astype(np.int16))
    same = np.frombuffer(ours, np.uint8) == np.frombuffer(theirs, np.uint8)
    assert same.mean() > 0.98
    decoded = ffmpeg_decode(name, ours)
    error = np.abs(decoded - values)
    loud = np.abs(values) >= 256
    assert error[~loud].max() <= 8  # the quiet segments' half step
    assert (error[loud] / np.abs(values[loud])).max() < 0.045  # 4 bits of mantissa (and the clip)


def test_core_g711_decimator_keeps_the_phone_band_and_stops_what_would_alias() -> None:
    for hz, low, high in ((1_000.0, 0.97, 1.03), (3_000.0, 0.9, 1.03)):
        out = Decimator().process(tone(hz, 0.5))[200:-200]
        assert low < float(np.sqrt(2 * np.mean(out**2))) / 0.5 < high, hz
    # 6 kHz folds onto 2 kHz when every third sample is kept: the filter must remove it first.
    naive = tone(6_000.0, 0.5)[::3]
    filtered = Decimator().process(tone(6_000.0, 0.5))[200:-200]
    assert float(np.sqrt(np.mean(naive**2))) > 0.3
    assert float(np.sqrt(np.mean(filtered**2))) < 1e-3


def test_core_g711_decimator_is_the_same_however_the_stream_is_cut_and_keeps_timing() -> None:
    signal = tone(440.0, 0.3) + tone(2_500.0, 0.3, amplitude=0.2)
    whole = Decimator()
    expected = np.concatenate([whole.process(signal), whole.flush()])
    assert len(expected) == -(-len(signal) // 3)
    rng = np.random.default_rng(7)
    cuts = np.sort(rng.choice(np.arange(1, len(signal)), size=40, replace=False))
    pieces = Decimator()
    out = [pieces.process(part) for part in np.split(signal, cuts)]
    np.testing.assert_allclose(np.concatenate([*out, pieces.flush()]), expected, atol=1e-6)
    # No delay: output sample m is input sample 3 m, low-passed.
    middle = slice(100, -100)
    np.testing.assert_allclose(expected[middle], signal[::3][middle], atol=0.02)


@pytest.mark.parametrize("fmt", ["mulaw", "alaw"])
def test_core_g711_encoder_streams_whole_samples_that_ffmpeg_decodes(fmt: str) -> None:
    assert fmt in AUDIO_FORMATS and MIME_TYPES[fmt].endswith("rate=8000")
    signal = tone(700.0, 0.6, amplitude=0.4)
    pcm = float32_to_pcm16(signal)
    encoder = create_encoder(fmt)
    assert encoder.format == fmt
    chunks = [encoder.encode(pcm[i : i + 4801]) for i in range(0, len(pcm), 4801)]
    chunks.append(encoder.flush())
    data = b"".join(chunks)
    assert len(data) == -(-len(signal) // 3)  # one byte per 8 kHz sample
    back = pcm16_to_float32(decode_audio(data, fmt))  # FFmpeg's decoder, resampled to 24 kHz
    assert abs(len(back) - len(signal)) < 100
    n = min(len(back), len(signal)) - 400
    a, b = signal[200 : 200 + n], back[200 : 200 + n]
    lag = int(np.argmax([np.dot(a[: n - 60], b[k : k + n - 60]) for k in range(60)]))
    a, b = a[: n - 60], b[lag : lag + n - 60]
    snr = 10 * np.log10(np.sum(a**2) / np.sum((a - b) ** 2))
    assert snr > 25, snr  # 8-bit companding: about 35 dB on a clean tone
