"""Audio (sans-I/O): pcm16 at 24 kHz, WAV, and streaming encoders that emit whole codec frames.

Every streaming encoder hands back, per :meth:`AudioEncoder.encode` call, only whole codec units, so a
consumer can decode each chunk (appended to the earlier ones) the moment it arrives:

* ``pcm16`` (:mod:`.pcm`): the bytes unchanged (raw s16le mono, 24 kHz).
* ``wav`` (:mod:`.wav`): one 44-byte streaming RIFF header (sizes ``0xFFFFFFFF``), then raw PCM.
* ``mp3`` (:mod:`.mp3`): whole MPEG-2 Layer III frames (lameenc, CBR; 576 samples per frame at 24 kHz).
* ``opus`` (:mod:`.opus`, pages by :mod:`.ogg`): Ogg Opus at 48 kHz (resampled inside, PyAV); the first
  chunk carries ``OpusHead`` and ``OpusTags``; every chunk is whole Ogg pages.
* ``aac`` (:mod:`.aac`): AAC-LC in ADTS, whole 1,024-sample frames, each with its own 7-byte header.
* ``mulaw`` / ``alaw`` (:mod:`.g711`, decimated by :mod:`.downsample`): G.711 for phone lines, 8 kHz,
  one byte a sample, no header (band-limited resampling from 24 kHz, not linear).
* ``flac`` (:mod:`.flac`; not a Leg 1 format: the OpenAI-compatible route's ``response_format=flac``):
  ``fLaC`` and one STREAMINFO block (unknown length), then whole FLAC frames.

The modules: :mod:`.encoder` (format names, media types, the :class:`AudioEncoder` protocol),
:mod:`.factory` (:func:`create_encoder`), :mod:`.framed` (the PyAV engine behind AAC and FLAC),
:mod:`.decode` (:func:`decode_audio`) and :mod:`.resample`. This package re-exports the names callers use,
so ``from strands_voice_protocol.audio import create_encoder`` works.

``lameenc`` (``strands-voice[mp3]``) and ``av`` (``strands-voice[opus]`` or ``[aac]``) are optional and
imported only when an encoder or decoder that needs them is created.
"""

from strands_voice_protocol.audio.aac import AacEncoder, adts_frame_size
from strands_voice_protocol.audio.decode import decode_audio
from strands_voice_protocol.audio.encoder import (
    AUDIO_FORMATS,
    CODEC_FORMATS,
    MIME_TYPES,
    TELEPHONY_FORMATS,
    AudioEncoder,
    format_sample_rate,
)
from strands_voice_protocol.audio.factory import create_encoder
from strands_voice_protocol.audio.flac import FlacEncoder
from strands_voice_protocol.audio.g711 import G711_RATE, AlawEncoder, MulawEncoder
from strands_voice_protocol.audio.mp3 import Mp3Encoder, mp3_frame_size
from strands_voice_protocol.audio.opus import OpusEncoder
from strands_voice_protocol.audio.pcm import (
    BYTES_PER_SECOND,
    SAMPLE_RATE,
    Pcm16Encoder,
    float32_to_pcm16,
    pcm16_to_float32,
)
from strands_voice_protocol.audio.wav import (
    STREAMING_WAV_SIZE,
    WavEncoder,
    pcm16_to_wav,
    wav_header,
    write_wav,
)

__all__ = [
    "AUDIO_FORMATS",
    "BYTES_PER_SECOND",
    "CODEC_FORMATS",
    "G711_RATE",
    "MIME_TYPES",
    "SAMPLE_RATE",
    "STREAMING_WAV_SIZE",
    "TELEPHONY_FORMATS",
    "AacEncoder",
    "AlawEncoder",
    "AudioEncoder",
    "FlacEncoder",
    "Mp3Encoder",
    "MulawEncoder",
    "OpusEncoder",
    "Pcm16Encoder",
    "WavEncoder",
    "adts_frame_size",
    "create_encoder",
    "decode_audio",
    "float32_to_pcm16",
    "format_sample_rate",
    "mp3_frame_size",
    "pcm16_to_float32",
    "pcm16_to_wav",
    "wav_header",
    "write_wav",
]
