"""run_voice in bidi and batch mode end to end: a real Strands Agent (scripted model), the REAL endpoint."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import threading
from collections.abc import Callable
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel, split_tokens
from strands import Agent
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.chunker import IncrementalSentenceChunker
from strands_voice_protocol.events import EVENT_TYPES
from strands_voice_protocol.speech_text import clean_for_speech

from strands_voice.agent._run_voice import run_voice
from strands_voice.speech._options import VoiceOptions
from strands_voice.speech._response import split_for_requests

pytestmark = pytest.mark.timeout(240)

#: The scripted answer's length in bidi tests: long enough that the first chunk's audio beats the last
#: text even when the shared CPU synthesizes several times slower than real time.
BIDI_TOTAL_S = 20.0

#: The shared CPU can synthesize several times slower than real time while other suites run.
SILENCE_S = 120.0


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since ``before``, still alive, except the endpoint's own workers (``synth_*``)."""
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.name.startswith("synth")
    ]


def chunks_of(text: str) -> list[str]:
    chunker = IncrementalSentenceChunker()
    out = [chunk for token in split_tokens(text) for chunk in chunker.feed(token)]
    return out + chunker.finish()


def agent_for(text: str, first_sentence_s: float = 0.3, total_s: float = 3.0) -> Agent:
    model = ScriptedModel(text=text, first_sentence_s=first_sentence_s, total_s=total_s)
    return Agent(model=model, callback_handler=None)


async def collect(events: Any) -> list[dict[str, Any]]:
    async with contextlib.aclosing(events) as stream:
        return [event async for event in stream]


def run_checked(coro_factory: Callable[[], Any]) -> Any:
    """Run in a fresh loop; afterwards no task of ours and no new thread may be left."""
    threads_before = set(threading.enumerate())

    async def main() -> Any:
        async with asyncio.timeout(200):
            result = await coro_factory()
        assert asyncio.all_tasks() == {asyncio.current_task()}, asyncio.all_tasks()
        return result

    result = asyncio.run(main())
    leftover = new_threads(threads_before)
    assert not leftover, leftover
    return result


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def check_common(events: list[dict[str, Any]], text: str, mode: str) -> None:
    assert events[0]["type"] == "agent_start" and events[0]["mode"] == mode
    assert events[-1]["type"] == "agent_end"
    assert all(e["type"] in EVENT_TYPES and isinstance(e["t_ms"], float) for e in events)
    times = [e["t_ms"] for e in events]
    assert times == sorted(times), "events must leave in arrival order"
    deltas = of_type(events, "text_delta")
    assert "".join(e["text"] for e in deltas) == text
    assert [e["seq"] for e in deltas] == list(range(len(deltas)))
    audio = of_type(events, "audio_chunk")
    assert audio and [e["seq"] for e in audio] == list(range(len(audio)))
    assert of_type(events, "audio_start")[0]["t_ms"] <= audio[0]["t_ms"]
    pcm = b"".join(base64.b64decode(e["data"]) for e in audio)
    end = of_type(events, "audio_end")[0]
    assert end["chunks"] == len(audio)
    assert end["duration_s"] == pytest.approx(len(pcm) / BYTES_PER_SECOND, abs=1e-3)
    assert len(pcm) > BYTES_PER_SECOND  # over a second of real speech
    final = events[-1]
    assert final["ttfa_ms"] == audio[0]["t_ms"]
    assert final["text_ms"] == deltas[-1]["t_ms"]
    assert final["audio_ms"] == audio[-1]["t_ms"]
    assert not of_type(events, "error")


def test_bidi_speaks_while_the_agent_writes(endpoint_server: Any, short_text: str, recording: Any) -> None:
    factory = recording(endpoint_server.ws_url)
    events = run_checked(
        lambda: collect(
            run_voice(
                agent_for(short_text, first_sentence_s=0.2, total_s=BIDI_TOTAL_S),
                "Tell me.",
                transport_factory=factory,
                silence_timeout=SILENCE_S,
            )
        )
    )
    check_common(events, short_text, "bidi")
    audio = of_type(events, "audio_chunk")
    deltas = of_type(events, "text_delta")
    assert audio[0]["t_ms"] < deltas[-1]["t_ms"], "bidi's first audio must come before the last text"
    expected = chunks_of(short_text)
    assert len(expected) == 3
    # Every chunk was sent, each as soon as it was ready, on ONE session, and every chunk's audio arrived
    # in order, each sentence closed by sentence_complete.
    (transport,) = factory.made
    assert transport.synthesized == expected and transport.closed
    done = of_type(events, "sentence_complete")
    assert [(e["sentence"], e["text"]) for e in done] == list(enumerate(expected))
    sentences = [e["sentence"] for e in audio]
    assert sentences == sorted(sentences) and set(sentences) == {0, 1, 2}
    for entry in done:
        last_audio = [e for e in audio if e["sentence"] == entry["sentence"]][-1]
        assert last_audio["t_ms"] <= entry["t_ms"]
        assert entry["duration_s"] > 0.3


def test_batch_speaks_after_the_whole_answer(endpoint_server: Any, short_text: str, recording: Any) -> None:
    factory = recording(endpoint_server.ws_url)
    events = run_checked(
        lambda: collect(
            run_voice(
                agent_for(short_text, total_s=1.5),
                "Tell me.",
                options=VoiceOptions(mode="batch"),
                transport_factory=factory,
                silence_timeout=SILENCE_S,
            )
        )
    )
    check_common(events, short_text, "batch")
    audio = of_type(events, "audio_chunk")
    assert audio[0]["t_ms"] > of_type(events, "text_delta")[-1]["t_ms"]
    assert {e["sentence"] for e in audio} == {0}
    (transport,) = factory.made
    assert transport.synthesized == [clean_for_speech(short_text)], "batch is ONE synthesis request"
    (done,) = of_type(events, "sentence_complete")
    assert done["sentence"] == 0 and done["text"] == clean_for_speech(short_text)


def test_connection_cut_mid_answer_is_resumed_and_speech_completes(
    endpoint_server: Any, short_text: str, recording: Any
) -> None:
    # The real endpoint; the connection under the session is cut after the first sentence's audio.
    factory = recording(endpoint_server.ws_url, drop_after_completes=1)

    async def main() -> list[dict[str, Any]]:
        return await collect(
            run_voice(
                agent_for(short_text, total_s=2.0),
                "Tell me.",
                transport_factory=factory,
                options=VoiceOptions(format="wav"),
            )
        )

    events = run_checked(main)
    assert "".join(e["text"] for e in of_type(events, "text_delta")) == short_text
    # The session resumes on a new connection: no error, every sentence spoken once.
    assert of_type(events, "error") == []
    sentences = [e["sentence"] for e in of_type(events, "sentence_complete")]
    assert sentences == list(range(len(sentences))) and len(sentences) >= 2
    assert events[-1]["type"] == "agent_end"
    assert of_type(events, "audio_start")[0]["format"] == "wav"
    assert factory.made[0].closed


def test_endpoint_error_for_one_chunk_keeps_speaking(text_limited_endpoint: Any) -> None:
    text = (
        "Short first sentence here, fine. " + "This middle sentence is much too long for the limit. " + "Bye."
    )
    events = run_checked(
        lambda: collect(
            run_voice(
                agent_for(text, total_s=1.5),
                "Hi.",
                tts_url=text_limited_endpoint.ws_url,
                silence_timeout=SILENCE_S,
            )
        )
    )
    (error,) = of_type(events, "error")
    assert error["code"] == "text_too_long"
    assert "".join(e["text"] for e in of_type(events, "text_delta")) == text
    assert [e["sentence"] for e in of_type(events, "sentence_complete")] == [0, 2]
    assert {e["sentence"] for e in of_type(events, "audio_chunk")} == {0, 2}


def test_unreachable_endpoint_reports_once_and_text_flows(short_text: str) -> None:
    events = run_checked(
        lambda: collect(
            run_voice(
                agent_for(short_text, total_s=0.5), "Hi.", tts_url="ws://127.0.0.1:9/x", connect_timeout=2
            )
        )
    )
    (error,) = of_type(events, "error")
    assert error["code"] in {"connection_failed", "connect_timeout"}
    assert "".join(e["text"] for e in of_type(events, "text_delta")) == short_text
    assert not of_type(events, "audio_chunk")
    assert events[-1] == {**events[-1], "type": "agent_end", "ttfa_ms": None, "audio_ms": None}


def test_caller_disconnect_cancels_everything(endpoint_server: Any, short_text: str, recording: Any) -> None:
    factory = recording(endpoint_server.ws_url)

    async def main() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        stream = run_voice(
            agent_for(short_text, total_s=6.0),
            "Tell me.",
            transport_factory=factory,
            silence_timeout=SILENCE_S,
        )
        async for event in stream:
            seen.append(event)
            if event["type"] == "audio_chunk":
                break
        await stream.aclose()  # the caller went away mid-answer
        return seen

    seen = run_checked(main)  # asserts no task and no thread is left
    assert seen[-1]["type"] == "audio_chunk"
    assert factory.made[0].closed


def test_split_for_requests() -> None:
    assert split_for_requests("One. Two.", 100) == ["One. Two."]
    assert split_for_requests("One two. Three four. Five.", 12) == ["One two.", "Three four.", "Five."]
    assert split_for_requests("Aaaa bbbb cccc dddd.", 10) == ["Aaaa bbbb", "cccc dddd."]
    assert split_for_requests("  ", 10) == []
    text = "A sentence. " * 50
    pieces = split_for_requests(text, 100)
    assert all(len(p) <= 100 for p in pieces) and " ".join(pieces) == text.strip()
    assert len(pieces) == 7  # the fewest that fit
