"""Heard by offline Whisper: Japanese, a lexicon word, a voice blend, and G.711 for phone lines.

Whisper is slow on a shared CPU: one model (the session fixture), five short clips.
"""

from __future__ import annotations

import argparse
import re
import wave
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
import numpy.typing as npt
import openai
import pytest
from kokoro_endpoint.serving.runner import RunningServer
from optional_groups import require
from strands_voice_protocol.audio import MIME_TYPES, decode_audio, pcm16_to_float32
from support.endpoint import whisper_input

# Held out: used nowhere else, not tuned for.
JAPANESE = ["私は毎朝コーヒーを飲みます。", "駅までの道を教えてください。", "この本はとても面白かったです。"]


def _heard(model: Any, pcm: bytes, language: str) -> str:
    """What Whisper hears in 24 kHz pcm16 (after a short lead-in: it hears speech at t=0 less well)."""
    padded = whisper_input(pcm16_to_float32(pcm), lead_in_s=0.3)
    segments, _info = model.transcribe(padded, language=language, beam_size=1)
    return " ".join(segment.text for segment in segments)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


def _characters(text: str) -> str:
    return "".join(re.findall(r"\w", text))


def _post(server: RunningServer, body: dict[str, Any]) -> httpx.Response:
    response = httpx.post(f"{server.base_url}/invocations", json=body, timeout=300)
    assert response.status_code == 200, response.text
    return response


def test_japanese_is_understood(endpoint_server: RunningServer, whisper_model: Any) -> None:
    jiwer = require("jiwer", "asr")
    require("pyopenjtalk", "ja")
    text = "".join(JAPANESE)
    pcm = _post(endpoint_server, {"text": text, "voice": "jf_alpha"}).content  # lang from the voice
    heard = _heard(whisper_model, pcm, "ja")
    error_rate = jiwer.cer(_characters(text), _characters(heard))
    print(f"Japanese CER {error_rate:.3f}: heard {heard!r}")
    assert error_rate <= 0.3, f"CER {error_rate:.2f}: heard {heard!r}"


def test_a_lexicon_word_is_heard_as_its_phonemes_say(
    endpoint_server: RunningServer, whisper_model: Any
) -> None:
    # "tomato" read with the phonemes of "potato": Whisper should hear the potato.
    body = {"text": "I would like a tomato, please.", "lexicon": {"tomato": "pətˈATO"}}
    heard = _words(_heard(whisper_model, _post(endpoint_server, body).content, "en"))
    assert "potato" in heard and "tomato" not in heard, heard


def test_alaw_on_invocations_decodes_to_speech_whisper_understands(
    endpoint_server: RunningServer, whisper_model: Any
) -> None:
    response = _post(endpoint_server, {"text": "Please open the front door.", "format": "alaw"})
    assert response.headers["content-type"] == MIME_TYPES["alaw"]
    pcm = decode_audio(response.content, "alaw")  # FFmpeg's A-law decoder (PyAV), not ours
    heard = _words(_heard(whisper_model, pcm, "en"))
    assert {"open", "front", "door"} <= set(heard), heard


def test_openai_sdk_speaks_a_blend_in_mulaw(endpoint_server: RunningServer, whisper_model: Any) -> None:
    with (
        openai.OpenAI(base_url=f"{endpoint_server.base_url}/v1", api_key="unused", max_retries=0) as client,
        client.audio.speech.with_streaming_response.create(
            model="kokoro",
            voice="jf_alpha(1)+jm_kumo(2)",
            input="The weather is lovely today.",
            response_format="mulaw",  # type: ignore[arg-type]  # an extension: G.711 for phone lines
        ) as response,
    ):
        assert response.headers["content-type"] == MIME_TYPES["mulaw"]
        data = b"".join(response.iter_bytes())
    seconds = len(data) / 8_000  # one byte a sample at 8 kHz
    assert 1.0 < seconds < 5.0, seconds
    samples: npt.NDArray[np.float32] = pcm16_to_float32(decode_audio(data, "mulaw"))  # FFmpeg's decoder
    assert abs(samples.size / 24_000 - seconds) < 0.05
    heard = _words(_heard(whisper_model, decode_audio(data, "mulaw"), "en"))
    assert {"weather", "lovely", "today"} <= set(heard), heard


def test_demo_with_a_japanese_voice_speaks_the_japanese_answer(
    tmp_path: Path, onnx_engine: Any, whisper_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    require("pyopenjtalk", "ja")
    from strands_voice_tools import demo
    from strands_voice_tools.demo import stack as demo_stack

    monkeypatch.setattr(demo_stack, "load_tts_engine", lambda: onnx_engine)
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    # A short Japanese answer keeps the clip short (tests/app/test_app_demo_language.py checks that the demo
    # picks the scripted model's own Japanese answer for a Japanese voice).
    answer = quote("プレミアムプランは月額二十四ドルです。いつでも解約できます。")
    fast = f"scripted?text={answer}&first_sentence_s=0.2&total_s=0.8"
    args = parser.parse_args(
        ["--model", fast, "--voice", "jf_alpha", "--mode", "bidi", "--out", str(tmp_path)]
    )
    assert demo.run(args) == 0
    with wave.open(str(tmp_path / "bidi.wav"), "rb") as wav:
        pcm = wav.readframes(min(wav.getnframes(), 6 * 24_000))  # the first sentence or so
    segments, info = whisper_model.transcribe(
        whisper_input(pcm16_to_float32(pcm), lead_in_s=0.3), beam_size=1
    )
    heard = " ".join(segment.text for segment in segments)
    assert info.language == "ja", (info.language, heard)
    assert re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", heard), heard
