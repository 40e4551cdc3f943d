"""The example AgentCore app end to end: real HTTP (uvicorn), real SSE decoding, the real TTS endpoint."""

from __future__ import annotations

import base64
import json
import math
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from strands_voice_protocol.audio import BYTES_PER_SECOND, decode_audio, format_sample_rate
from strands_voice_protocol.events import EVENT_TYPES

# The fields PROTOCOL.md Leg 3 gives each event type (besides "type" and "t_ms").
LEG3_FIELDS: dict[str, set[str]] = {
    "agent_start": {"mode", "request_id"},
    "text_delta": {"seq", "text"},
    "audio_start": {"format", "sample_rate", "channels"},
    "audio_chunk": {"seq", "sentence", "data"},
    "sentence_complete": {"sentence", "text", "duration_s"},
    "audio_end": {"chunks", "duration_s"},
    "agent_end": {"ttfa_ms", "text_ms", "audio_ms"},
    "error": {"code", "message"},
}


def check_leg3_stream(events: list[dict[str, Any]], mode: str, audio_format: str = "pcm16") -> bytes:
    """Check the shape and order of one response's events; return its audio decoded to pcm16."""
    assert events, "no events"
    for event in events:
        assert event["type"] in EVENT_TYPES, event
        assert isinstance(event["t_ms"], int | float) and not isinstance(event["t_ms"], bool), event
        assert LEG3_FIELDS[event["type"]] <= set(event), event
    times = [event["t_ms"] for event in events]
    assert times == sorted(times), "t_ms must not go backwards"
    assert events[0]["type"] == "agent_start" and events[0]["t_ms"] >= 0
    assert events[0]["mode"] == mode and events[0]["request_id"]
    assert events[-1]["type"] == "agent_end"
    assert [e for e in events if e["type"] == "error"] == []

    kinds = [event["type"] for event in events]
    assert kinds.count("audio_start") == 1 and kinds.count("audio_end") == 1
    first_chunk = kinds.index("audio_chunk")
    assert kinds.index("audio_start") < first_chunk
    assert max(i for i, kind in enumerate(kinds) if kind == "audio_chunk") < kinds.index("audio_end")

    audio_start = events[kinds.index("audio_start")]
    assert audio_start["format"] == audio_format
    assert audio_start["sample_rate"] == format_sample_rate(audio_format) and audio_start["channels"] == 1

    texts = [e for e in events if e["type"] == "text_delta"]
    assert [e["seq"] for e in texts] == list(range(len(texts)))
    chunks = [e for e in events if e["type"] == "audio_chunk"]
    assert [e["seq"] for e in chunks] == list(range(len(chunks)))
    sentences = [e["sentence"] for e in chunks]
    assert sentences == sorted(sentences), "audio arrives in sentence order"
    completes = [e for e in events if e["type"] == "sentence_complete"]
    assert [e["sentence"] for e in completes] == sorted(set(sentences))

    encoded = b"".join(base64.b64decode(e["data"], validate=True) for e in chunks)
    pcm = encoded if audio_format == "pcm16" else decode_audio(encoded, audio_format)
    assert len(pcm) > BYTES_PER_SECOND // 2, "at least half a second of speech"
    audio_end = events[kinds.index("audio_end")]
    assert audio_end["chunks"] == len(chunks)
    assert math.isclose(audio_end["duration_s"], len(pcm) / BYTES_PER_SECOND, abs_tol=0.1)
    assert math.isclose(sum(e["duration_s"] for e in completes), audio_end["duration_s"], abs_tol=0.01)

    agent_end = events[-1]
    assert agent_end["ttfa_ms"] == chunks[0]["t_ms"]
    assert agent_end["audio_ms"] == chunks[-1]["t_ms"]
    assert agent_end["text_ms"] == texts[-1]["t_ms"]
    return pcm


def test_app_bidi_streams_text_and_speech(scripted_app_url: str, invoke: Any, short_answer: str) -> None:
    raw: list[bytes] = []
    status, events = invoke(scripted_app_url, {"prompt": "Tell me something short."}, chunks=raw)
    assert status == 200
    assert b"".join(raw).startswith(b"data: {")  # framed by the runtime as data: {json}\n\n
    check_leg3_stream(events, "bidi")
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == short_answer
    completes = [e for e in events if e["type"] == "sentence_complete"]
    # bidi speaks sentence by sentence: the two sentences are two synthesis requests.
    assert [e["text"] for e in completes] == [
        "Here is the first sentence of a short answer.",
        "And here is the second one.",
    ]


def test_app_batch_speaks_the_whole_text_once(scripted_app_url: str, invoke: Any, short_answer: str) -> None:
    status, events = invoke(scripted_app_url, {"prompt": "Tell me something short.", "mode": "batch"})
    assert status == 200
    check_leg3_stream(events, "batch")
    completes = [e for e in events if e["type"] == "sentence_complete"]
    assert [e["sentence"] for e in completes] == [0]
    assert completes[0]["text"] == short_answer
    # Batch synthesis starts only after the whole text: the first audio comes after the last text.
    first_audio = next(e["t_ms"] for e in events if e["type"] == "audio_chunk")
    last_text = max(e["t_ms"] for e in events if e["type"] == "text_delta")
    assert first_audio > last_text


def test_app_passes_voice_speed_and_format(scripted_app_url: str, invoke: Any) -> None:
    payload = {"prompt": "Hi", "mode": "batch", "voice": "jm_kumo", "speed": 1.3, "format": "mp3"}
    status, events = invoke(scripted_app_url, payload)
    assert status == 200
    pcm = check_leg3_stream(events, "batch", audio_format="mp3")
    audio_end = next(e for e in events if e["type"] == "audio_end")
    status, slower = invoke(scripted_app_url, {**payload, "speed": 0.8, "format": "pcm16"})
    assert status == 200
    slow_end = next(e for e in slower if e["type"] == "audio_end")
    # The same text spoken at 0.8 instead of 1.3 lasts clearly longer: the speed reached the endpoint.
    assert slow_end["duration_s"] > audio_end["duration_s"] * 1.3
    assert pcm


def test_app_speaks_a_blend_with_a_lexicon_in_mulaw(scripted_app_url: str, invoke: Any) -> None:
    payload = {
        "prompt": "Hi",
        "voice": "jf_alpha(2)+jm_kumo(1)",
        "lang": "a",
        "lexicon": {"Premium": "pɹˈimiəm"},
        "format": "mulaw",
    }
    status, events = invoke(scripted_app_url, payload)
    assert status == 200
    assert check_leg3_stream(events, "bidi", audio_format="mulaw")
    assert next(e for e in events if e["type"] == "audio_start")["sample_rate"] == 8_000
    status, events = invoke(scripted_app_url, {"prompt": "Hi", "voice": "jm_kumo+nobody"})
    errors = [e for e in events if e["type"] == "error"]
    assert status == 200 and errors and all(e["code"] == "unknown_voice" for e in errors)
    assert "'nobody'" in errors[0]["message"]


def test_app_unknown_voice_is_an_error_event_and_text_still_flows(
    scripted_app_url: str, invoke: Any, short_answer: str
) -> None:
    status, events = invoke(scripted_app_url, {"prompt": "Hi", "voice": "zz_nobody"})
    assert status == 200
    errors = [e for e in events if e["type"] == "error"]
    assert errors and all(e["code"] == "unknown_voice" for e in errors)
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == short_answer
    assert events[0]["type"] == "agent_start" and events[-1]["type"] == "agent_end"
    assert not [e for e in events if e["type"] == "audio_chunk"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "Hi", "mode": "duplex"}, "mode"),
        ({"prompt": "Hi", "speed": "fast"}, "speed"),
        ({"prompt": "Hi", "format": "flac"}, "format"),
        ({"prompt": "Hi", "voice": 7}, "voice"),
        ({"prompt": "Hi", "extra": 1}, "extra"),
        (["prompt"], "JSON object"),
    ],
)
def test_app_rejects_a_bad_payload(scripted_app_url: str, invoke: Any, payload: Any, field: str) -> None:
    status, body = invoke(scripted_app_url, payload)
    assert status == 400
    [error] = body
    assert error["type"] == "error" and error["t_ms"] == 0 and error["code"] == "invalid_request"
    assert field in error["message"]
    assert "Traceback" not in error["message"] and "Error" not in error["message"]


def test_app_rejects_a_body_that_is_not_json(scripted_app_url: str) -> None:
    response = httpx.post(
        f"{scripted_app_url}/invocations", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "type": "error",
        "t_ms": 0,
        "code": "invalid_json",
        "message": "the request body must be a JSON object",
    }


def test_app_keeps_no_conversation_between_requests(echo_app_url: str, invoke: Any) -> None:
    def heard(prompt: str) -> str:
        status, events = invoke(echo_app_url, {"prompt": prompt, "mode": "batch"})
        assert status == 200
        assert [e for e in events if e["type"] == "error"] == []
        return "".join(e["text"] for e in events if e["type"] == "text_delta").strip()

    assert heard("alpha") == "Heard: alpha."
    assert heard("bravo") == "Heard: bravo."  # not "alpha / bravo": the first request left nothing behind
    # Two callers at the same time: each hears only its own prompt.
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(heard, ["charlie", "delta"]))
    assert answers == ["Heard: charlie.", "Heard: delta."]


def test_app_text_utf8_cannot_carry_is_one_error_event_and_the_answer_goes_on(
    echo_app_url: str, invoke: Any
) -> None:
    """Regression: a lone surrogate in the model's text (here echoed from the prompt) once raised a raw
    UnicodeEncodeError inside the runtime's SSE framing. Now that event becomes one clear error, the
    answer's other events still arrive, and the speech (which drops unspeakable characters) completes."""
    body = b'{"prompt": "alpha \\ud800 bravo", "mode": "batch"}'  # JSON escapes: valid JSON, lone surrogate
    status, events = invoke(echo_app_url, body)
    assert status == 200
    errors = [e for e in events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["agent_error"]
    assert "not valid Unicode" in errors[0]["message"]
    texts = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert texts.startswith("Heard: alpha") and "bravo." in texts
    spoken = [e["text"] for e in events if e["type"] == "sentence_complete"]
    assert spoken == ["Heard: alpha bravo."]
    assert events[-1]["type"] == "agent_end" and any(e["type"] == "audio_chunk" for e in events)


def test_app_ping_and_agentcore_headers(scripted_app_url: str, invoke: Any) -> None:
    ping = httpx.get(f"{scripted_app_url}/ping")
    assert ping.status_code == 200 and ping.json()["status"] in {"Healthy", "HealthyBusy"}
    headers = {"X-Amzn-Bedrock-AgentCore-Runtime-Request-Id": "req-from-runtime-1"}
    with (
        httpx.Client(timeout=60.0) as client,
        client.stream(
            "POST", f"{scripted_app_url}/invocations", json={"prompt": "Hi", "mode": "batch"}, headers=headers
        ) as response,
    ):
        first_line = next(response.iter_lines())
    start = json.loads(first_line.removeprefix("data: "))
    assert start["type"] == "agent_start" and start["request_id"] == "req-from-runtime-1"


def test_app_serves_the_browser_page(tmp_path: Path, endpoint_server: Any) -> None:
    from agentcore_app.app import create_app
    from kokoro_endpoint.serving.runner import running_server

    (tmp_path / "index.html").write_text("<!doctype html><title>voice</title>", encoding="utf-8")
    (tmp_path / "player.js").write_text("export const ok = 1;\n", encoding="utf-8")
    app = create_app(tts_url=endpoint_server.ws_url, model="scripted", static_dir=tmp_path)
    with running_server(app) as server:
        page = httpx.get(f"{server.base_url}/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "<title>voice</title>" in page.text
        script = httpx.get(f"{server.base_url}/static/player.js")
        assert script.status_code == 200 and "ok = 1" in script.text
        assert httpx.get(f"{server.base_url}/static/missing.js").status_code == 404
        assert httpx.get(f"{server.base_url}/static/../app.py").status_code == 404

    empty = tmp_path / "nothing"
    app = create_app(tts_url=endpoint_server.ws_url, model="scripted", static_dir=empty)
    with running_server(app) as server:
        page = httpx.get(f"{server.base_url}/")
        assert page.status_code == 404 and "no browser page" in page.text
