"""Word timestamps and normalization with the real endpoint (ONNX Kokoro), checked against offline Whisper.

The timestamps are monotonic, inside the audio, cover every spoken written word once and index the
ORIGINAL text; Whisper's own word timings (faster-whisper ``word_timestamps=True``) agree with them; and
normalization makes Whisper hear written-English traps the way people say them, on sentences that are not
in the rule table.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import json
import re
from typing import Any

import httpx
import numpy as np
import pytest
from kokoro_endpoint.serving.runner import RunningServer
from strands_voice_protocol.sse import SSEDecoder
from support.endpoint import Reply, collect, replies, whisper_input
from websockets.asyncio.client import connect

BYTES_PER_SECOND = 48_000

TEXTS = [
    "Dr. Smith paid $1.5M for approx. 40 km of road, e.g. the coastal one. It opened at 10:30am on Main St.",
    "Hello there! This is a test of word timings, and it has two sentences.",
]

# Whisper agreement: plain sentences (no normalization rules involved), several segments each.
AGREEMENT_TEXTS = [
    "The quick brown fox jumps over the lazy dog. A gentle breeze moved across the quiet lake.",
    "Please remember to water the plants every morning before you leave for work.",
    "Our library opens early on weekdays, and the children love the story hour on Fridays.",
]


def _ws_requests(server: RunningServer, messages: list[dict[str, Any]]) -> list[Reply]:
    async def run() -> list[Reply]:
        async with connect(server.ws_url, max_size=None) as ws:
            for message in messages:
                await ws.send(json.dumps(message))
            return replies(await collect(ws, terminals=len(messages)))

    return asyncio.run(run())


def _all_words(reply: Reply) -> list[dict[str, Any]]:
    return [word for _, frame in reply.words for word in frame["words"]]


def _written_words(text: str) -> list[tuple[int, int]]:
    """The spans of the whitespace-delimited words of ``text`` that have a letter or a digit."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text) if any(c.isalnum() for c in m.group(0))]


def _check_words(text: str, reply: Reply) -> None:
    assert reply.kind == "synthesis_complete"
    duration = reply.end["total_duration_s"]  # type: ignore[index]
    words = _all_words(reply)
    assert words, "no word_timestamps frames"
    previous_start = previous_end = 0.0
    for word in words:
        # Maps back to the original characters.
        assert text[word["char_start"] : word["char_end"]] == word["word"]
        # Monotonic and inside the audio (the last frame of padding may round up by one 25 ms frame).
        assert word["start_s"] >= previous_start and word["start_s"] >= previous_end - 1e-6
        assert word["start_s"] <= word["end_s"] <= duration + 0.026
        previous_start, previous_end = word["start_s"], word["end_s"]
    # Each frame comes before its segment's audio: its words start at or after the audio already sent.
    for sent_before, frame in reply.words:
        assert frame["words"][0]["start_s"] >= sent_before / BYTES_PER_SECOND - 1e-3
    # Every spoken written word, once (a rewrite such as "-5 °F" may make one timestamp of two words).
    spans = [(w["char_start"], w["char_end"]) for w in words]
    for start, end in _written_words(text):
        overlapping = [s for s in spans if s[0] < end and start < s[1]]
        assert len(overlapping) == 1, f"{text[start:end]!r} has {len(overlapping)} timestamps"


def test_websocket_word_timestamps_map_to_the_original_text(endpoint_server: RunningServer) -> None:
    messages = [{"text": text, "request_id": f"t{i}", "timestamps": True} for i, text in enumerate(TEXTS)]
    messages.append({"text": "No timestamps here.", "request_id": "plain"})
    got = _ws_requests(endpoint_server, messages)
    for text, reply in zip(TEXTS, got, strict=False):
        _check_words(text, reply)
        assert len(reply.words) >= 2  # one frame per segment: these texts have several
    assert got[-1].kind == "synthesis_complete" and got[-1].words == []
    first = _all_words(got[0])
    assert [w["word"] for w in first[:5]] == ["Dr.", "Smith", "paid", "$1.5M", "for"]


def test_sse_word_timestamps_come_before_their_audio(endpoint_server: RunningServer) -> None:
    text = TEXTS[0]
    body = {"text": text, "transport": "sse", "timestamps": True, "request_id": "s1"}
    response = httpx.post(f"{endpoint_server.base_url}/invocations", json=body, timeout=240)
    assert response.status_code == 200
    decoder = SSEDecoder()
    events = [event.json() for event in decoder.feed(response.content) + decoder.flush()]
    reply = Reply("s1", start=events[0])
    for event in events[1:]:
        if event["type"] == "word_timestamps":
            assert event["request_id"] == "s1"
            reply.words.append((len(reply.audio), event))
        elif event["type"] == "audio_chunk":
            reply.audio += base64.b64decode(event["data"])
        else:
            reply.end = event
    assert events[1]["type"] == "word_timestamps"  # the first segment's words precede its audio
    _check_words(text, reply)


def test_a_bad_timestamps_field_is_an_invalid_request(endpoint_server: RunningServer) -> None:
    got = _ws_requests(
        endpoint_server, [{"text": "Hi.", "timestamps": "yes"}, {"text": "Hi.", "normalize": 1}]
    )
    assert [r.end["code"] for r in got] == ["invalid_request", "invalid_request"]  # type: ignore[index]


def _samples(pcm: bytes) -> Any:
    """24 kHz pcm16 as the 16 kHz float32 Whisper expects."""
    return whisper_input(np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0)


def _key(word: str) -> str:
    return re.sub(r"[^a-z0-9]", "", word.lower())


def _onset_differences(got: list[Reply]) -> list[float]:
    """For the first word of each segment (it follows a pause): |its start - where the audio turns loud|."""
    differences = []
    for reply in got:
        samples = np.frombuffer(bytes(reply.audio), dtype="<i2").astype(np.float32) / 32768.0
        frames = samples[: samples.size // 600 * 600].reshape(-1, 600)
        loud = np.sqrt(np.mean(frames**2, axis=1)) > 0.02
        for sent_before, frame in reply.words:
            first = sent_before // 2 // 600
            onset = first + int(np.argmax(loud[first:]))
            differences.append(abs(frame["words"][0]["start_s"] - onset * 600 / 24_000))
    return differences


def test_timestamps_agree_with_whisper(endpoint_server: RunningServer, whisper_model: Any) -> None:
    messages = [{"text": t, "request_id": f"a{i}", "timestamps": True} for i, t in enumerate(AGREEMENT_TEXTS)]
    got = _ws_requests(endpoint_server, messages)
    differences: list[float] = []
    for reply in got:
        ours = _all_words(reply)
        segments, _info = whisper_model.transcribe(
            _samples(bytes(reply.audio)), language="en", beam_size=1, word_timestamps=True
        )
        heard = [word for segment in segments for word in (segment.words or [])]
        matcher = difflib.SequenceMatcher(
            a=[_key(w["word"]) for w in ours], b=[_key(w.word) for w in heard], autojunk=False
        )
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                differences.append(ours[block.a + k]["start_s"] - heard[block.b + k].start)
        assert matcher.ratio() > 0.8, [w.word for w in heard]
    onsets = _onset_differences(got)
    print(
        f"\nfirst word of each segment vs audio onset: mean |difference| "
        f"{1000 * float(np.mean(onsets)):.0f} ms"
    )
    assert float(np.mean(onsets)) < 0.05
    absolute = np.abs(differences)
    mean_ms = 1000 * float(np.mean(absolute))
    print(
        f"\nwhisper agreement: {len(differences)} words, mean |start difference| = {mean_ms:.0f} ms, "
        f"median {1000 * float(np.median(absolute)):.0f} ms, mean signed (ours - whisper) "
        f"{1000 * float(np.mean(differences)):.0f} ms"
    )
    # Whisper-base's own word starts run early (it starts a word where the last one ended); the figure and
    # its bias are reported in docs/PROTOCOL.md. This bound only guards against a regression.
    assert mean_ms < 300


# Written-English traps in sentences that are not in the rule table (test_normalize.py), and what
# Whisper must hear in them (as Whisper writes it: "40,000", "3-4 times").
HELD_OUT = [
    ("Our team needs approx. 12 kg of flour, i.e. three bags.", ["approximately", "kilograms", "that is"]),
    (
        "Prices rose to €40k last year, e.g. for the small flats.",
        ["40 ?000|forty thousand", "euros", "for example"],
    ),
    ("Ms. Park lands at 6:15 p.m. and drives 30 mph.", ["pm", "miles per hour"]),
    ("Email tom.lee@mail.com or visit docs.python.org today.", ["mail com", "python org"]),
    ("Output grew 3–4x in Q3, approx. 20% YoY.", ["3 (to )?4 times", "approximately", "year over year"]),
    # Whisper may write the spoken "2.4 thousand dollars" in its currency notation ("$2.4k", "$2.4,000"):
    # with trimmed pauses and windowed decoding it does, so the "$" counts as "dollars".
    ("The rent is $2.4k a month, vs. $3k downtown.", [r"(thousand|000) dollars|\$2 4 ?(k|000)", "versus"]),
]


@pytest.mark.parametrize(("text", "expected"), HELD_OUT, ids=[t for t, _ in HELD_OUT])
def test_whisper_hears_held_out_traps_the_way_people_say_them(
    endpoint_server: RunningServer, whisper_model: Any, text: str, expected: list[str]
) -> None:
    (reply,) = _ws_requests(endpoint_server, [{"text": text}])
    segments, _info = whisper_model.transcribe(_samples(bytes(reply.audio)), language="en", beam_size=1)
    heard = " ".join(segment.text for segment in segments).lower().replace("p.m.", "pm")
    heard = " ".join(re.sub(r"[^a-z0-9$ ]+", " ", heard).split())
    missing = [phrase for phrase in expected if not re.search(phrase, heard)]
    assert not missing, f"heard {heard!r}"


def test_normalize_false_reads_the_text_as_written(
    endpoint_server: RunningServer, whisper_model: Any
) -> None:
    text = "Bring fruit, e.g. apples."
    on, off = _ws_requests(endpoint_server, [{"text": text}, {"text": text, "normalize": False}])
    heard = []
    for reply in (on, off):
        segments, _info = whisper_model.transcribe(_samples(bytes(reply.audio)), language="en", beam_size=1)
        heard.append(" ".join(segment.text for segment in segments).lower())
    assert "for example" in heard[0]
    assert "for example" not in heard[1], heard
