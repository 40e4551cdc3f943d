"""VoiceCallbackHandler on a real Strands Agent (scripted model) against the REAL endpoint."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from dataclasses import replace
from typing import Any

import pytest
from agentcore_app.scripted import ScriptedModel
from strands import Agent
from strands.handlers.callback_handler import CompositeCallbackHandler, PrintingCallbackHandler
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.errors import ConfigurationError
from strands_voice_protocol.speech_text import clean_for_speech

from strands_voice.agent._handler import VoiceCallbackHandler
from strands_voice.speech._options import VOICE_OPTIONS_KEY, VoiceOptions, request_options

pytestmark = pytest.mark.timeout(240)

#: Long enough that the first chunk's audio beats the last text on a loaded, shared CPU.
TOTAL_S = 20.0

#: The shared CPU can synthesize several times slower than real time while other suites run.
SILENCE_S = 120.0


def new_threads(before: set[threading.Thread]) -> list[threading.Thread]:
    """Threads started since ``before``, still alive, except the endpoint's own workers (``synth_*``)."""
    return [
        t
        for t in threading.enumerate()
        if t not in before and t.is_alive() and not t.name.startswith("synth")
    ]


class TextRecorder:
    """A second callback handler: records when each text delta and the result arrived."""

    def __init__(self) -> None:
        self.deltas: list[tuple[float, str]] = []
        self.result_at: float | None = None

    def __call__(self, **kwargs: Any) -> None:
        if isinstance(kwargs.get("data"), str):
            self.deltas.append((time.monotonic(), kwargs["data"]))
        if "result" in kwargs:
            self.result_at = time.monotonic()


class EventRecorder:
    """on_event callback: records events with their arrival time (called on the worker thread)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.events.append((time.monotonic(), event))
            self.threads.add(threading.current_thread().name)

    def of_type(self, kind: str) -> list[tuple[float, dict[str, Any]]]:
        return [(t, e) for t, e in self.events if e["type"] == kind]


def check_spoken(
    events: list[dict[str, Any]], first_text_at: float, audio_at: list[float], last_text: float
) -> None:
    kinds = [e["type"] for e in events]
    assert kinds[0] == "audio_start" and kinds[-1] == "audio_end" and "error" not in kinds
    audio = [e for e in events if e["type"] == "audio_chunk"]
    assert [e["seq"] for e in audio] == list(range(len(audio)))
    sentences = [e["sentence"] for e in audio]
    assert sentences == sorted(sentences) and set(sentences) == {0, 1, 2}
    done = [e for e in events if e["type"] == "sentence_complete"]
    assert [e["sentence"] for e in done] == [0, 1, 2]
    assert done[1]["text"] == "The Premium plan costs $24.99 per month."
    pcm = b"".join(base64.b64decode(e["data"]) for e in audio)
    assert events[-1]["chunks"] == len(audio)
    assert events[-1]["duration_s"] == pytest.approx(len(pcm) / BYTES_PER_SECOND, abs=1e-3)
    assert first_text_at < audio_at[0] < last_text, "the first audio must come while the agent still writes"


def test_handler_under_agent_call(endpoint_server: Any, short_text: str, recording: Any) -> None:
    threads_before = set(threading.enumerate())
    factory = recording(endpoint_server.ws_url)
    recorder = EventRecorder()
    audio: list[bytes] = []
    text = TextRecorder()
    voice = VoiceCallbackHandler(
        transport_factory=factory,
        options=VoiceOptions(voice="jm_kumo"),
        on_event=recorder,
        on_audio=audio.append,
    )
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.2, total_s=TOTAL_S),
        # Composes with Strands' own handlers: printing plus ours plus a recorder.
        callback_handler=CompositeCallbackHandler(PrintingCallbackHandler(), voice, text),
    )
    # This request's options: the handler's, one field changed.
    request = replace(voice.options, speed=1.2)
    result = agent("Tell me about the plan.", invocation_state={VOICE_OPTIONS_KEY: request})
    assert str(result).strip() == short_text
    assert voice.wait(timeout=200)
    voice.close()
    events = [e for _, e in recorder.events]
    check_spoken(
        events, text.deltas[0][0], [t for t, _ in recorder.of_type("audio_chunk")], text.deltas[-1][0]
    )
    assert b"".join(audio) == b"".join(
        base64.b64decode(e["data"]) for e in events if e["type"] == "audio_chunk"
    )
    # ONE session for the response, closed after the last audio; per-request speed, per-handler voice.
    (transport,) = factory.made
    assert transport.closed
    assert [m["type"] for m in transport.sent] == ["synthesize"] * 3 + ["close"]
    assert {(m["voice"], m["speed"]) for m in transport.sent[:3]} == {("jm_kumo", 1.2)}
    assert recorder.threads == {"voice-response-1"}
    leftover = new_threads(threads_before)
    assert not leftover, leftover


def test_handler_under_stream_async(endpoint_server: Any, short_text: str, recording: Any) -> None:
    threads_before = set(threading.enumerate())
    factory = recording(endpoint_server.ws_url)
    voice = VoiceCallbackHandler(
        transport_factory=factory, silence_timeout=SILENCE_S, options=VoiceOptions(format="wav")
    )
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.2, total_s=TOTAL_S), callback_handler=voice
    )

    async def main() -> tuple[list[tuple[float, dict[str, Any]]], list[float]]:
        stream = voice.events(until_audio_end=True)
        got: list[tuple[float, dict[str, Any]]] = []

        async def consume() -> None:
            async for event in stream:
                got.append((time.monotonic(), event))

        consumer = asyncio.create_task(consume())
        text_times: list[float] = []
        state = {VOICE_OPTIONS_KEY: VoiceOptions(format="wav", speed=0.9)}
        async for event in agent.stream_async("Tell me about the plan.", invocation_state=state):
            if "data" in event:
                text_times.append(time.monotonic())
        async with asyncio.timeout(200):
            await consumer
            await voice.wait_async()
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return got, text_times

    got, text_times = asyncio.run(main())
    voice.close()
    events = [e for _, e in got]
    check_spoken(events, text_times[0], [t for t, e in got if e["type"] == "audio_chunk"], text_times[-1])
    assert events[0]["format"] == "wav"
    wav = b"".join(base64.b64decode(e["data"]) for e in events if e["type"] == "audio_chunk")
    assert wav[:4] == b"RIFF"
    (transport,) = factory.made
    assert transport.closed and {m.get("speed") for m in transport.sent[:3]} == {0.9}
    leftover = new_threads(threads_before)
    assert not leftover, leftover


def test_speech_failure_is_reported_once_and_text_goes_on(short_text: str) -> None:
    recorder = EventRecorder()
    text = TextRecorder()
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/x", on_event=recorder, connect_timeout=2)
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.1, total_s=0.5),
        callback_handler=CompositeCallbackHandler(voice, text),
    )
    assert str(agent("Hi.")).strip() == short_text
    assert "".join(d for _, d in text.deltas) == short_text
    assert voice.wait(timeout=30)
    voice.close()
    kinds = [e["type"] for _, e in recorder.events]
    assert kinds == ["error", "audio_end"], kinds
    assert recorder.events[0][1]["code"] in {"connection_failed", "connect_timeout"}


def test_endpoint_error_mid_answer_keeps_text_and_other_audio(text_limited_endpoint: Any) -> None:
    text_answer = "Short first sentence here, fine. This middle sentence is much too long for the limit. Bye."
    recorder = EventRecorder()
    voice = VoiceCallbackHandler(text_limited_endpoint.ws_url, on_event=recorder, silence_timeout=SILENCE_S)
    agent = Agent(
        model=ScriptedModel(text=text_answer, first_sentence_s=0.1, total_s=1.0), callback_handler=voice
    )
    assert str(agent("Hi.")).strip() == text_answer
    assert voice.wait(timeout=200)
    voice.close()
    events = [e for _, e in recorder.events]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["text_too_long"]
    assert [e["sentence"] for e in events if e["type"] == "sentence_complete"] == [0, 2]
    assert events[-1]["type"] == "audio_end"


def test_per_request_options_type() -> None:
    """A request's options are a whole VoiceOptions (else the handler's); nothing else is taken."""
    defaults = VoiceOptions(voice="a", speed=1.0)
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/x", options=defaults)
    assert voice.options == defaults
    assert request_options(VoiceOptions(voice="b"), defaults) == VoiceOptions(voice="b")
    assert request_options(None, defaults) == defaults
    with pytest.raises(ConfigurationError, match="must be a VoiceOptions"):
        request_options({"speed": 1.5}, defaults)
    voice.close()


def test_stream_refuses_options_that_are_not_voice_options() -> None:
    voice = VoiceCallbackHandler("ws://127.0.0.1:9/x")
    agent = Agent(model=ScriptedModel(text="Hi.", first_sentence_s=0.0, total_s=0.0), callback_handler=None)

    async def main() -> None:
        state = {VOICE_OPTIONS_KEY: {"mode": "batch"}}
        async for _event in voice.stream(agent, "Hi.", invocation_state=state):
            pass

    with pytest.raises(ConfigurationError, match="must be a VoiceOptions"):
        asyncio.run(main())
    assert not voice.speaking
    voice.close()


def test_mode_per_request_through_the_handler(endpoint_server: Any, short_text: str, recording: Any) -> None:
    """One handler (default ``bidi``), three requests: ``batch`` from ``invocation_state``, the default,
    then ``batch`` from :meth:`begin_response` (the plugin's way); and ``stream()`` overriding a ``batch``
    handler."""
    factory = recording(endpoint_server.ws_url)
    recorder = EventRecorder()
    voice = VoiceCallbackHandler(transport_factory=factory, on_event=recorder, silence_timeout=SILENCE_S)
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.1, total_s=1.0), callback_handler=voice
    )
    agent("Tell me.", invocation_state={VOICE_OPTIONS_KEY: VoiceOptions(mode="batch")})
    assert voice.wait(timeout=200)
    agent("Tell me.")
    assert voice.wait(timeout=200)
    voice.begin_response(VoiceOptions(mode="batch"), agent=agent)
    agent("Tell me.")
    assert voice.wait(timeout=200)
    voice.close()
    batch, bidi, batch_again = (transport.synthesized for transport in factory.made)
    assert batch == batch_again == [clean_for_speech(short_text)], "batch: the whole text, one request"
    assert len(bidi) == 3 and " ".join(bidi) == clean_for_speech(short_text), "bidi: chunk by chunk"
    assert "error" not in [e["type"] for _, e in recorder.events]

    # The Leg 3 form: a handler whose default is batch, asked for bidi by one request.
    factory = recording(endpoint_server.ws_url)
    voice = VoiceCallbackHandler(
        transport_factory=factory, options=VoiceOptions(mode="batch"), silence_timeout=SILENCE_S
    )
    agent = Agent(
        model=ScriptedModel(text=short_text, first_sentence_s=0.1, total_s=1.0), callback_handler=voice
    )

    async def main() -> list[dict[str, Any]]:
        state = {VOICE_OPTIONS_KEY: VoiceOptions(mode="bidi")}
        return [event async for event in voice.stream(agent, "Tell me.", invocation_state=state)]

    events = asyncio.run(asyncio.wait_for(main(), 200))
    voice.close()
    assert events[0]["type"] == "agent_start" and events[0]["mode"] == "bidi"
    assert events[-1]["type"] == "agent_end" and "error" not in [e["type"] for e in events]
    (transport,) = factory.made
    assert len(transport.synthesized) == 3
    with pytest.raises(ValueError, match="unknown mode"):
        VoiceOptions(mode="stream")  # type: ignore[arg-type]
