"""Audio helpers: conversions, WAV, and the streaming encoders really encode, chunk by decodable chunk."""

from __future__ import annotations

import base64
import builtins
import io
import struct
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from strands_voice_protocol.audio import (
    AUDIO_FORMATS,
    BYTES_PER_SECOND,
    CODEC_FORMATS,
    SAMPLE_RATE,
    STREAMING_WAV_SIZE,
    AacEncoder,
    AudioEncoder,
    OpusEncoder,
    adts_frame_size,
    create_encoder,
    decode_audio,
    float32_to_pcm16,
    pcm16_to_float32,
    pcm16_to_wav,
    write_wav,
)
from strands_voice_protocol.audio.ogg import OggWriter, ogg_crc
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.errors import AudioEncodingError, MissingDependencyError


def speech_like(seconds: float, seed: int = 1) -> bytes:
    """Voiced, syllable-rate-modulated harmonics with a little noise: a stand-in for speech."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(SAMPLE_RATE * seconds)) / SAMPLE_RATE
    pitch = 140 + 30 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / SAMPLE_RATE
    voiced = sum(np.sin(k * phase) / k for k in range(1, 12))
    envelope = np.clip(np.sin(2 * np.pi * 4 * t), 0, None) ** 0.5
    signal = 0.25 * voiced * envelope + 0.01 * rng.standard_normal(t.shape)
    return float32_to_pcm16(signal)


def encode_in_chunks(fmt: str, pcm: bytes, step: int) -> list[bytes]:
    encoder = create_encoder(fmt)
    chunks = [encoder.encode(pcm[k : k + step]) for k in range(0, len(pcm), step)]
    chunks.append(encoder.flush())
    return chunks


def test_core_audio_conversions_round_trip() -> None:
    samples = np.array([0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -3.0, np.nan], dtype=np.float32)
    pcm = float32_to_pcm16(samples)
    assert np.frombuffer(pcm, "<i2").tolist() == [0, 16384, -16384, 32767, -32767, 32767, -32767, 0]
    back = pcm16_to_float32(pcm)
    assert back.dtype == np.float32 and np.allclose(back[:5], samples[:5], atol=1e-4)
    with pytest.raises(AudioEncodingError):
        pcm16_to_float32(b"\x00")


def test_core_audio_wav_file(tmp_path: Path) -> None:
    pcm = speech_like(0.5)
    path = tmp_path / "a.wav"
    write_wav(path, pcm)
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, SAMPLE_RATE)
        assert w.readframes(w.getnframes()) == pcm
    assert decode_audio(pcm16_to_wav(pcm), "wav") == pcm
    assert decode_audio(pcm16_to_wav(pcm[:4800], sample_rate=12000), "wav") != b""  # resampled


def test_core_audio_streaming_wav_header() -> None:
    pcm = speech_like(0.3)
    chunks = encode_in_chunks("wav", pcm, 1001)  # odd sizes: a sample split across calls
    assert chunks[0][:4] == b"RIFF" and b"RIFF" not in b"".join(chunks[1:])
    riff_size, data_size = (
        struct.unpack_from("<I", chunks[0], 4)[0],
        struct.unpack_from("<I", chunks[0], 40)[0],
    )
    assert riff_size == data_size == STREAMING_WAV_SIZE
    assert all(len(c) % 2 == 0 for c in chunks[1:])
    data = b"".join(chunks)
    assert decode_audio(data, "wav") == pcm
    # The stdlib reader accepts the streaming header too.
    with wave.open(io.BytesIO(data)) as w:
        assert w.readframes(10**9) == pcm
    assert create_encoder("wav").flush()[:4] == b"RIFF"  # an empty stream is still a WAV


def test_core_audio_pcm16_unchanged() -> None:
    encoder = create_encoder("pcm16")
    assert encoder.encode(b"\x01\x02\x03") == b"\x01\x02\x03"
    assert encoder.flush() == b""
    assert encoder.mime_type.startswith("audio/L16")


def parse_mp3_frames(data: bytes) -> list[int]:
    """Sizes of the MPEG-1/2 Layer III frames making up ``data``; fails unless it is whole frames."""
    bitrates = {
        3: [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],  # MPEG-1
        2: [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],  # MPEG-2
    }
    rates = {3: [44100, 48000, 32000], 2: [22050, 24000, 16000]}
    sizes, pos = [], 0
    while pos < len(data):
        assert len(data) - pos >= 4, "a partial frame header"
        header = int.from_bytes(data[pos : pos + 4], "big")
        assert header >> 21 == 0x7FF, f"no frame sync at {pos}"
        version, layer = (header >> 19) & 3, (header >> 17) & 3
        assert layer == 1 and version in (2, 3)
        bitrate = bitrates[version][(header >> 12) & 15] * 1000
        rate = rates[version][(header >> 10) & 3]
        padding = (header >> 9) & 1
        size = (144 if version == 3 else 72) * bitrate // rate + padding
        assert pos + size <= len(data), "a frame is split across chunks"
        sizes.append(size)
        pos += size
    return sizes


@pytest.mark.parametrize("step", [960, 4801, 48000])
def test_core_audio_mp3_whole_frames_and_duration(step: int) -> None:
    pcm = speech_like(2.0)
    chunks = encode_in_chunks("mp3", pcm, step)
    frames = 0
    for chunk in chunks:
        frames += len(parse_mp3_frames(chunk))  # each chunk on its own is whole frames
    assert frames * 576 >= len(pcm) // 2
    decoded = b""
    for k in range(1, len(chunks) + 1):
        prefix = b"".join(chunks[:k])
        if prefix:
            decoded = decode_audio(prefix, "mp3")
            assert len(decoded) >= len(decode_audio(b"".join(chunks[: k - 1]), "mp3")) if k > 1 else True
    # LAME adds encoder delay and pads the last frame: allow up to 3 frames (72 ms) of difference.
    assert abs(len(decoded) // 2 - len(pcm) // 2) <= 3 * 576
    assert create_encoder("mp3").mime_type == "audio/mpeg"


def parse_ogg_pages(data: bytes) -> list[tuple[int, int, bytes]]:
    """(header type, granule, first packet bytes) of each page; fails unless ``data`` is whole pages."""
    pages, pos = [], 0
    while pos < len(data):
        assert data[pos : pos + 4] == b"OggS", f"no page at {pos}"
        flags, granule = data[pos + 5], struct.unpack_from("<q", data, pos + 6)[0]
        count = data[pos + 26]
        lacing = data[pos + 27 : pos + 27 + count]
        body = pos + 27 + count
        size = body + sum(lacing) - pos
        assert pos + size <= len(data), "a page is split across chunks"
        pages.append((flags, granule, data[body : body + 8]))
        pos += size
    return pages


def test_core_audio_ogg_crc_check_value() -> None:
    # CRC-32 with polynomial 0x04C11DB7, initial value 0, no reflection and no final xor (RFC 3533): the
    # published CRC-32/CKSUM check value 0x765E7680 without its final xor with 0xFFFFFFFF.
    assert ogg_crc(b"123456789") == 0x765E7680 ^ 0xFFFFFFFF
    assert ogg_crc(b"") == 0


def test_core_audio_ogg_writer_splits_pages_on_packet_boundaries() -> None:
    writer = OggWriter(serial=7)
    # 300 packets of one lacing value each: a page holds at most 255 segments, so two pages.
    packets = [(bytes([i % 256]) * 10, (i + 1) * 960) for i in range(300)]
    data = writer.pages(packets)
    pages = parse_ogg_pages(data)
    assert len(pages) == 2
    assert pages[0][0] & 0x02 and not pages[1][0] & 0x02  # beginning of stream on the first page only
    assert [granule for _, granule, _ in pages] == [
        255 * 960,
        300 * 960,
    ]  # granule of each page's last packet
    # A packet of exactly 255 bytes takes two lacing values (255, then 0); the end-of-stream page follows.
    last = parse_ogg_pages(writer.pages([(b"x" * 255, 301 * 960)], eos=True))
    assert last == [(0x04, 301 * 960, b"x" * 8)]
    with pytest.raises(AudioEncodingError):
        writer.pages([(b"x" * 255 * 255, 0)])  # needs 256 lacing values: more than one page holds


def test_core_audio_resample_linear_keeps_pitch_and_length() -> None:
    rate, seconds, tone = 12_000, 1.0, 440.0
    t = np.arange(int(rate * seconds)) / rate
    pcm = float32_to_pcm16(0.5 * np.sin(2 * np.pi * tone * t))
    out = pcm16_to_float32(resample_linear(pcm, rate))
    assert len(out) == SAMPLE_RATE * seconds
    spectrum = np.abs(np.fft.rfft(out))
    assert abs(np.argmax(spectrum) * SAMPLE_RATE / len(out) - tone) <= 1.0  # 1 Hz bins over 1 s
    same = np.frombuffer(resample_linear(pcm, rate, to_rate=rate), dtype="<i2").astype(int)
    assert np.abs(same - np.frombuffer(pcm, dtype="<i2")).max() <= 1  # the float round trip: 1 LSB at most
    assert resample_linear(b"", rate) == b""
    with pytest.raises(AudioEncodingError):
        resample_linear(b"\x00", rate)


@pytest.mark.parametrize("step", [960, 4801, 48000])
def test_core_audio_opus_pages_decode_chunk_by_chunk(step: int) -> None:
    pcm = speech_like(2.0)
    chunks = encode_in_chunks("opus", pcm, step)
    first = next(c for c in chunks if c)
    first_pages = parse_ogg_pages(first)
    assert first_pages[0][2] == b"OpusHead" and first_pages[0][0] & 0x02  # beginning of stream
    assert first_pages[1][2] == b"OpusTags"
    granules = []
    for chunk in chunks:
        pages = parse_ogg_pages(chunk)
        granules += [g for _, g, _ in pages]
    assert granules == sorted(granules)
    assert parse_ogg_pages(chunks[-1])[-1][0] & 0x04  # end of stream on the very last page
    previous = 0
    for k in range(1, len(chunks) + 1):
        prefix = b"".join(chunks[:k])
        if not any(chunks[:k]):
            continue
        decoded = decode_audio(prefix, "opus")
        assert len(decoded) >= previous
        previous = len(decoded)
    # The final granule trims the padding: within one 20 ms frame of the input.
    assert abs(previous // 2 - len(pcm) // 2) <= 480
    # Latency: after each call, every whole 20 ms frame given so far is out (at most one frame plus the
    # resampler's few samples wait inside).
    if step == 4801:
        encoder = create_encoder("opus")
        sent = 0
        out = b""
        for k in range(0, len(pcm) - step, step):
            out += encoder.encode(pcm[k : k + step])
            sent += len(pcm[k : k + step]) // 2
            last_granule = parse_ogg_pages(out)[-1][1]
            assert last_granule >= 2 * sent - 2 * 960


def test_core_audio_opus_size_vs_base64_pcm() -> None:
    seconds = 5.0
    pcm = speech_like(seconds)
    opus = b"".join(encode_in_chunks("opus", pcm, 4800))  # 100 ms calls, as a TTS stream would
    base64_pcm = len(base64.b64encode(pcm))
    ratio = len(opus) / base64_pcm
    print(f"opus {len(opus) / seconds:.0f} B/s vs base64 pcm16 {base64_pcm / seconds:.0f} B/s: {ratio:.1%}")
    assert ratio <= 0.12
    assert base64_pcm / seconds == pytest.approx(BYTES_PER_SECOND * 4 / 3, rel=0.01)


def test_core_audio_opus_decodes_to_similar_signal() -> None:
    pcm = speech_like(1.0)
    decoded = decode_audio(b"".join(encode_in_chunks("opus", pcm, 2400)), "opus")
    a, b = pcm16_to_float32(pcm), pcm16_to_float32(decoded[: len(pcm)])
    # Energy within a few dB: the codec kept the signal, not silence or noise.
    assert 0.5 < float(np.sqrt(np.mean(b**2)) / np.sqrt(np.mean(a**2))) < 2.0


def parse_adts_frames(data: bytes) -> int:
    """How many ADTS frames ``data`` holds; fails unless it is whole frames."""
    frames, pos = 0, 0
    while pos < len(data):
        size = adts_frame_size(data[pos : pos + 7])
        assert size is not None, f"no ADTS header at {pos}"
        assert data[pos + 1] & 0x01 == 1, "ADTS without CRC expected"
        assert (data[pos + 2] >> 6) == 1 and (data[pos + 2] >> 2) & 0x0F == 6, "AAC-LC at 24 kHz"
        assert pos + size <= len(data), "an ADTS frame is split across chunks"
        pos += size
        frames += 1
    return frames


@pytest.mark.parametrize("step", [960, 4801, 48000])
def test_core_audio_aac_adts_frames_decode_chunk_by_chunk(step: int) -> None:
    pcm = speech_like(2.0)
    chunks = encode_in_chunks("aac", pcm, step)
    frames = sum(parse_adts_frames(chunk) for chunk in chunks)  # each chunk on its own is whole frames
    assert frames * 1024 >= len(pcm) // 2
    previous = 0
    received = b""
    for chunk in chunks:
        if not chunk:
            continue
        assert len(decode_audio(chunk, "aac")) > 0  # a chunk alone decodes: no frame is split
        received += chunk
        decoded = decode_audio(received, "aac")  # and so does every prefix, growing
        assert len(decoded) > previous
        previous = len(decoded)
    # ADTS carries the encoder's 1,024 priming samples plus the padding of the last frame.
    assert len(pcm) // 2 <= previous // 2 <= len(pcm) // 2 + 2 * 1024
    a = pcm16_to_float32(pcm)
    b = pcm16_to_float32(decode_audio(received, "aac"))[1024 : 1024 + len(a)]
    assert 0.5 < float(np.sqrt(np.mean(b**2)) / np.sqrt(np.mean(a**2))) < 2.0
    assert create_encoder("aac").mime_type == "audio/aac"


def test_core_audio_aac_rejects_a_rate_adts_cannot_carry() -> None:
    with pytest.raises(AudioEncodingError, match="ADTS"):
        AacEncoder(sample_rate=23_000)


def test_core_audio_flac_is_lossless_and_streams() -> None:
    pcm = speech_like(1.5)
    chunks = encode_in_chunks("flac", pcm, 4801)
    first = next(chunk for chunk in chunks if chunk)
    assert first[:4] == b"fLaC" and first[4] == 0x80  # STREAMINFO, the only (last) metadata block
    assert sum(chunk.startswith(b"fLaC") for chunk in chunks) == 1
    assert decode_audio(b"".join(chunks), "flac") == pcm
    assert "flac" in CODEC_FORMATS and "flac" not in AUDIO_FORMATS


def test_core_audio_encoder_protocol_and_errors() -> None:
    for fmt in CODEC_FORMATS:
        encoder = create_encoder(fmt)
        assert isinstance(encoder, AudioEncoder) and encoder.format == fmt
        encoder.flush()
        with pytest.raises(AudioEncodingError):
            encoder.encode(b"\x00\x00")
    with pytest.raises(AudioEncodingError):
        create_encoder("vorbis")
    with pytest.raises(AudioEncodingError):
        decode_audio(b"not audio at all" * 10, "mp3")
    with pytest.raises(AudioEncodingError):
        decode_audio(b"RIFF", "wav")


def test_core_audio_missing_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("lameenc", "av"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(MissingDependencyError, match=r"strands-voice\[mp3\]"):
        create_encoder("mp3")
    with pytest.raises(MissingDependencyError, match=r"strands-voice\[opus\]"):
        OpusEncoder()
    with pytest.raises(MissingDependencyError, match=r"strands-voice\[opus\]"):
        decode_audio(b"x", "opus")
    with pytest.raises(MissingDependencyError, match=r"strands-voice\[aac\]"):
        create_encoder("aac")
    assert create_encoder("wav").format == "wav"  # the stdlib formats need no extra
