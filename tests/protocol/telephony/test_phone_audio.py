"""The phone's audio: G.711 μ-law decoding (the inverse of the encoder), and 8 kHz μ-law ↔ 16 kHz pcm16
streamed: a stream cut into 20 ms frames converts as the whole, a tone keeps its pitch and level, and what
lies above the telephone band does not come back as images."""

from __future__ import annotations

import numpy as np
from strands_voice_protocol.audio.g711 import mulaw_decode, mulaw_encode
from strands_voice_protocol.telephony.phone_audio import CallToPhone, PhoneToCall


def test_mulaw_decodes_the_g711_codes_and_inverts_the_encoder_within_its_step() -> None:
    # G.711's own values for a few codes: silence both ways, the extremes.
    assert np.frombuffer(mulaw_decode(bytes([0xFF, 0x7F, 0x00, 0x80])), "<i2").tolist() == [
        0,
        0,
        -32124,
        32124,
    ]
    ramp = np.linspace(-1.0, 1.0, 40_001)
    back = np.frombuffer(mulaw_decode(mulaw_encode(ramp)), "<i2") / 32768.0
    step = np.abs(ramp) / 16 + 16 / 32768  # a segment's step is 1/16 of its level (8 near zero)
    assert np.all(np.abs(back - ramp) <= step)
    codes = bytes(range(256))
    again = mulaw_encode(np.frombuffer(mulaw_decode(codes), "<i2") / 32767.0)
    assert again == bytes(0xFF if code == 0x7F else code for code in codes)  # -0 and +0: one value


def tone_16k(hz: float, seconds: float, level: float = 0.5) -> bytes:
    t = np.arange(round(seconds * 16_000)) / 16_000
    return (np.sin(2 * np.pi * hz * t) * level * 32767).astype("<i2").tobytes()


def level_at(pcm: bytes, rate: int, hz: float) -> float:
    samples = np.frombuffer(pcm, "<i2").astype(np.float64) / 32768.0
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples)))) / (len(samples) / 4)
    return float(spectrum[round(hz * len(samples) / rate)])


def test_a_tone_goes_to_the_phone_and_back_with_its_pitch_and_level_and_no_images() -> None:
    to_phone = CallToPhone()
    phone = to_phone.convert(tone_16k(1000.0, 1.0)) + to_phone.flush()
    assert len(phone) == 8000
    back = PhoneToCall().convert(phone)
    assert len(back) == 2 * 16_000
    assert abs(level_at(back, 16_000, 1000.0) - 0.5) < 0.03
    assert level_at(back, 16_000, 7000.0) < 0.005  # 8 kHz minus the tone: the image zero-stuffing makes


def test_twenty_millisecond_frames_convert_as_the_whole_stream() -> None:
    audio = tone_16k(440.0, 0.5) + tone_16k(1700.0, 0.5)
    to_phone, whole_out = CallToPhone(), CallToPhone().convert(audio)
    framed = b"".join(to_phone.convert(audio[i : i + 640]) for i in range(0, len(audio), 640))
    assert framed == whole_out
    from_phone, whole_in = PhoneToCall(), PhoneToCall().convert(whole_out)
    framed_in = b"".join(from_phone.convert(whole_out[i : i + 160]) for i in range(0, len(whole_out), 160))
    assert framed_in == whole_in and PhoneToCall().convert(b"") == b""
