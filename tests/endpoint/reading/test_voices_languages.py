"""Voice blends, languages and lexicons: parsing, validation, the engine's reading, every route's errors."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest
from kokoro_endpoint.engines.pipeline import synthesize_segments
from kokoro_endpoint.reading.languages import Reading, normalized, request_language
from kokoro_endpoint.reading.lexicon import (
    Lexicon,
    lexicon_problem,
    load_lexicon_file,
    phonemize_with_lexicon,
)
from kokoro_endpoint.serving.runner import RunningServer
from kokoro_endpoint.serving.synthesis_job import SynthesisJob, validate_synthesize
from kokoro_endpoint.settings import Settings
from kokoro_endpoint.voices import VoicePart, blend_styles, parse_voice
from optional_groups import require
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.frames import ErrorFrame, Synthesize, decode_client_message
from support.endpoint import collect, replies
from websockets.asyncio.client import connect

JAPANESE = "今日はいい天気ですね。"


def test_voice_specs_parse_into_weighted_parts() -> None:
    assert parse_voice("af_heart") == (VoicePart("af_heart"),)
    assert parse_voice("a+b") == (VoicePart("a"), VoicePart("b"))
    assert parse_voice(" a ( 2 ) + b(0.5) ") == (VoicePart("a", 2.0), VoicePart("b", 0.5))
    for bad in ("a(0)+b", "a++b", "a(x)", "+".join("v" * 9), "a(2"):
        with pytest.raises(ValueError):
            parse_voice(bad)


def test_a_blend_is_the_weighted_mean_of_its_parts() -> None:
    styles = {"a": np.full((2, 3), 1.0, np.float32), "b": np.full((2, 3), 4.0, np.float32)}
    np.testing.assert_allclose(blend_styles(parse_voice("a(2)+b(1)"), styles), 2.0)
    np.testing.assert_allclose(blend_styles(parse_voice("a+b"), styles), 2.5)
    with pytest.raises(ValueError, match="'c'"):
        blend_styles(parse_voice("a+c"), styles)


def test_the_language_comes_from_the_request_else_the_voice() -> None:
    assert request_language("j", "af_heart", "Hello.") == "j"
    assert request_language(None, "jf_alpha", JAPANESE) == "j"
    assert request_language(None, "bf_emma+af_heart", "Hello.") == "b"
    # The offline engine's voices are Japanese: Latin text under them stays English unless asked.
    assert request_language(None, "jm_kumo", "Hello there.") == "a"
    assert request_language(None, "custom_voice", JAPANESE) == "a"  # no Kokoro language letter


def test_english_normalization_never_touches_other_languages() -> None:
    text = "e.g. 5 km、東京 Dr. Lee"
    assert normalized(text, "j", True).text == text
    assert normalized(text, "a", True).text != text
    assert normalized(text, "a", False).text == text


def test_lexicon_checks_name_the_word() -> None:
    alphabet = set("abkOəɹˈ ")
    assert lexicon_problem({"Kokoro": "kˈOkəɹO"}, "Kokoro.", alphabet) is None
    problem = lexicon_problem({"Kokoro": "kˈOkəɹO", "Zed": "z€d"}, "", alphabet)
    assert problem is not None and "'Zed'" in problem and "€" in problem
    problem = lexicon_problem({}, "Say [Zed](/zQd/) now.", alphabet)
    assert problem is not None and "'Zed'" in problem
    problem = lexicon_problem({"Zed": " "}, "", alphabet)
    assert problem is not None and "'Zed'" in problem
    lexicon = Lexicon({"Kokoro": "x"}, {"kokoro": "y", "Brand": "z"})
    assert lexicon.lookup("KOKORO") == "y" and lexicon.lookup("Kokoro") == "x" and len(lexicon) == 3


def test_lexicon_words_are_read_as_given_by_readers_without_tokens() -> None:
    said: list[str] = []

    def phonemize(text: str) -> str:
        said.append(text)
        return f"<{text.strip()}>"

    out = phonemize_with_lexicon("東京タワーと[東京](/toːkʲoː/)へ", {"タワー": "taɰaː"}, phonemize)
    assert out == "<東京> taɰaː <と> toːkʲoː <へ>"
    # An ASCII word matches whole words only, any case.
    assert phonemize_with_lexicon("Acme acmes ACME", {"acme": "AK"}, phonemize) == "AK <acmes> AK"


def test_deployment_lexicon_file(tmp_path: Path) -> None:
    good = tmp_path / "lexicon.json"
    good.write_text(json.dumps({" Kokoro ": "kˈOkəɹO"}), encoding="utf-8")
    assert load_lexicon_file(good) == {"Kokoro": "kˈOkəɹO"}
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigurationError, match="JSON object"):
        load_lexicon_file(bad)
    with pytest.raises(ConfigurationError):
        load_lexicon_file(tmp_path / "missing.json")


def test_lang_and_lexicon_ride_the_synthesize_frame() -> None:
    message = decode_client_message('{"text": "Hi", "lang": "j", "lexicon": {"Hi": "haI"}}')
    assert isinstance(message, Synthesize) and message.lang == "j" and message.lexicon == {"Hi": "haI"}


def _validate(engine: Any, settings: Settings | None = None, **fields: Any) -> SynthesisJob | ErrorFrame:
    return validate_synthesize(Synthesize(**fields), engine, settings or Settings())


def test_validation_of_blends_languages_and_lexicons(onnx_engine: Any) -> None:
    job = _validate(onnx_engine, text="Hi.", voice="jf_alpha(2)+jm_kumo(1)")
    assert isinstance(job, SynthesisJob) and job.voice == "jf_alpha(2)+jm_kumo(1)" and job.reading.lang == "a"
    unknown = _validate(onnx_engine, text="Hi.", voice="jf_alpha+nobody", request_id="r")
    assert (
        isinstance(unknown, ErrorFrame) and unknown.code == "unknown_voice" and "'nobody'" in unknown.message
    )
    assert unknown.request_id == "r"
    malformed = _validate(onnx_engine, text="Hi.", voice="jf_alpha++jm_kumo")
    assert isinstance(malformed, ErrorFrame) and malformed.code == "unknown_voice"
    for weight in ("0", "1001", "1" + "0" * 400):  # the last reads as infinity
        refused = _validate(onnx_engine, text="Hi.", voice=f"jf_alpha({weight})+jm_kumo")
        assert isinstance(refused, ErrorFrame) and refused.code == "invalid_request", weight
    unsupported = _validate(onnx_engine, text="你好。", lang="z")
    assert isinstance(unsupported, ErrorFrame) and unsupported.code == "unsupported_language"
    assert "'z'" in unsupported.message and "a (American English)" in unsupported.message
    bad = _validate(onnx_engine, text="Hello Acme.", lexicon={"Acme": "æk€mi"})
    assert isinstance(bad, ErrorFrame) and bad.code == "invalid_request" and "'Acme'" in bad.message
    deployment = Settings(lexicon={"Acme": "ˈækmi", "Kokoro": "kˈOkəɹO"})
    job = _validate(onnx_engine, deployment, text="Acme and Kokoro.", lexicon={"acme": "ˈækmA"})
    assert isinstance(job, SynthesisJob)
    assert job.reading.lexicon["Kokoro"] == "kˈOkəɹO" and job.reading.lexicon["acme"] == "ˈækmA"
    assert isinstance(job.reading.lexicon, Lexicon) and job.reading.lexicon.lookup("Acme") == "ˈækmi"


def _audio(engine: Any, text: str, voice: str, reading: Reading | None = None) -> tuple[Any, list[Any]]:
    outputs = list(synthesize_segments(engine, text, voice, 1.0, 60, None, timestamps=True, reading=reading))
    return np.concatenate([output.audio for output in outputs]), [w for o in outputs for w in o.words]


def _spectrum(audio: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    frames = audio[: len(audio) // 512 * 512].reshape(-1, 512) * np.hanning(512)
    return np.asarray(np.log(np.abs(np.fft.rfft(frames, axis=1)).mean(axis=0) + 1e-6))


def test_a_blend_sounds_between_its_parts(onnx_engine: Any) -> None:
    text = "The weather is lovely today."
    first, second, blend = (
        _spectrum(_audio(onnx_engine, text, voice)[0])
        for voice in ("jf_alpha", "jm_kumo", "jf_alpha+jm_kumo")
    )

    def distance(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
        return float(np.sqrt(np.mean((a - b) ** 2)))

    apart = distance(first, second)
    assert 0.2 * apart < distance(blend, first) < apart
    assert 0.2 * apart < distance(blend, second) < apart


def test_japanese_is_read_by_its_reader(onnx_engine: Any, endpoint_server: RunningServer) -> None:
    """The Japanese reader (the ``ja`` group): a Japanese voice's blend validates as Japanese, is spoken,
    and is listed; Leg 1 speaks it."""
    require("pyopenjtalk", "ja")
    job = _validate(onnx_engine, text=JAPANESE, voice="jf_alpha(2)+jm_kumo(1)")
    assert isinstance(job, SynthesisJob) and job.reading.lang == "j"
    audio, _ = _audio(onnx_engine, JAPANESE, "jf_alpha", Reading("j"))
    loud = np.abs(audio) > 0.05
    assert len(audio) / 24_000 > 1.0 and loud.mean() > 0.1  # was silent with the English reader
    assert "j" in httpx.get(f"{endpoint_server.base_url}/voices", timeout=30).json()["languages"]

    async def leg1() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            await ws.send(
                json.dumps({"text": "東京へ行きます。", "voice": "jf_alpha(3)+jm_kumo", "request_id": "j"})
            )
            (got,) = replies(await collect(ws, terminals=1))
        assert got.kind == "synthesis_complete" and len(got.audio) > 24_000

    asyncio.run(leg1())


def test_without_the_japanese_reader_a_japanese_request_says_how_to_add_it(onnx_engine: Any) -> None:
    english_only = _engine_reading(onnx_engine, frozenset({"a"}))
    refused = _validate(english_only, text=JAPANESE, voice="jf_alpha", request_id="j")
    assert isinstance(refused, ErrorFrame) and refused.code == "unsupported_language"
    assert "uv sync --group ja" in refused.message and "kokoro-endpoint[ja]" in refused.message


def _engine_reading(engine: Any, languages: frozenset[str]) -> Any:
    """A copy of the real engine that offers only ``languages`` (what an install without a reader has)."""
    english_only = copy.copy(engine)
    english_only.languages = languages
    return english_only


def test_lexicon_words_keep_the_text_as_sent(onnx_engine: Any) -> None:
    text = "I love Kokoro today."
    _, words = _audio(onnx_engine, text, "jm_kumo", Reading("a", Lexicon({"kokoro": "kˈOkəɹO"})))
    assert [(w.word, text[w.char_start : w.char_end]) for w in words][2] == ("Kokoro", "Kokoro")
    inline = "I love [Kokoro](/kˈOkəɹO/) today."
    _, words = _audio(onnx_engine, inline, "jm_kumo", Reading("a"))
    assert [inline[w.char_start : w.char_end] for w in words] == ["I", "love", "Kokoro", "today"]


def test_routes_list_base_voices_and_answer_errors(endpoint_server: RunningServer) -> None:
    base = endpoint_server.base_url
    listed = httpx.get(f"{base}/voices", timeout=30).json()
    assert "jf_alpha" in listed["voices"] and not any("+" in voice for voice in listed["voices"])
    assert "a" in listed["languages"]
    assert httpx.get(f"{base}/v1/audio/voices", timeout=30).json() == listed
    bodies = [
        ({"text": "Hi.", "voice": "jf_alpha+nobody"}, "unknown_voice", "'nobody'"),
        ({"text": "Hi.", "lang": "z"}, "unsupported_language", "a (American English)"),
        ({"text": "Hi Acme.", "lexicon": {"Acme": "a€"}}, "invalid_request", "'Acme'"),
        ({"text": "Hi.", "lexicon": ["Acme"]}, "invalid_request", "lexicon"),
    ]
    for body, code, named in bodies:
        response = httpx.post(f"{base}/invocations", json=body, timeout=60)
        assert response.status_code == 400 and response.json()["code"] == code, response.text
        assert named in response.json()["message"]

    async def leg1() -> None:
        async with connect(endpoint_server.ws_url) as ws:
            await ws.send(json.dumps({"text": "Hi.", "lang": "z", "request_id": "z"}))
            await ws.send(json.dumps({"text": "Hi.", "voice": "jf_alpha(3)+jm_kumo", "request_id": "b"}))
            got = replies(await collect(ws, terminals=2))
        assert got[0].end is not None and got[0].end["code"] == "unsupported_language"
        assert got[1].kind == "synthesis_complete" and len(got[1].audio) > 12_000

    asyncio.run(leg1())
