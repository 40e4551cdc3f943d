"""``WS /ws``, a spoken call, over a real socket: the app on 127.0.0.1:0, the library's Listener with plain
engines (call_support: a loudness VAD, scripted texts) and the in-memory TTS endpoint (instant_tts).

Typed and spoken turns answered through the same path as ``POST /invocations`` (one conversation per
session id across both routes), audio out as raw binary frames, barge-in by speaking (the agent keeps the
heard part), Stop, and every limit (frames before start, oversized frames, another rate, silence, a turn
that never ends, a bad session id) coded while the app keeps serving other calls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from strands_voice_protocol.audio import BYTES_PER_SECOND
from strands_voice_protocol.call_events import parse_call_event
from strands_voice_protocol.errors import RecognitionError
from support.call import START, Caller, scripted_listeners, silence, tone
from support.conversation_model import HOLD, HoldingEcho
from support.instant_tts import SECONDS_PER_REQUEST, InstantTTS

from strands_voice.turns import NOT_RECOGNIZED

pytestmark = pytest.mark.timeout(120)

SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
SESSION = "call-session-0123456789abcdef0123456789"


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[str, Any]]]:
    """``serve(model, texts, **limits) -> (ws_url, app)``: the app with scripted listening, on a free port."""
    from agentcore_app.app import create_app
    from agentcore_app.call import CallLimits
    from agentcore_app.conversation._store import ConversationStore
    from kokoro_endpoint.serving.runner import running_server

    stack: list[Any] = []

    def start(
        model: Any, texts: list[str], listen: dict[str, Any] | None = None, metrics: Any = None, **limits: Any
    ) -> tuple[str, Any]:
        app = create_app(
            tts_url="ws://127.0.0.1:9",
            model=model,
            conversation_store=ConversationStore(kind="none"),
            transport_factory=InstantTTS,
            listener_factory=scripted_listeners(texts, **(listen or {})),
            call_limits=CallLimits(**limits),
            metrics=metrics,
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        server = running_server(app)
        stack.append(server)
        base = str(server.__enter__().base_url)
        return base.replace("http://", "ws://") + "/ws", app

    yield start
    for server in reversed(stack):
        server.__exit__(None, None, None)


def answer_text(events: list[dict[str, Any]], request_id: str) -> str:
    start = next(
        i for i, e in enumerate(events) if e["type"] == "agent_start" and e["request_id"] == request_id
    )
    text = []
    for event in events[start + 1 :]:
        if event["type"] == "agent_end":
            break
        if event["type"] == "text_delta":
            text.append(event["text"])
    return "".join(text).strip()


async def speak_over_the_answer(url: str, listen_s: float, over_s: float) -> Caller:
    """A call that asks a question, listens to the answer for ``listen_s`` (real time: heard audio) and
    then makes a sound of ``over_s`` over it."""
    caller = await Caller.listening(f"{url}?session_id={SESSION}")
    await caller.speak(tone(0.6) + silence(0.8), realtime=False)
    await caller.wait_for("audio_start")
    await caller.speak(silence(listen_s))
    await caller.speak(tone(over_s) + silence(0.8))
    return caller


def test_a_typed_turn_streams_its_audio_as_binary_frames_and_json_for_the_rest(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["unused"])

    async def call() -> Caller:
        caller = await Caller.open(url)
        await caller.send(START)
        listening = await caller.wait_for("listening")
        assert listening["sample_rate"] == 16000 and listening["session_id"].startswith("call-")
        await caller.send({"type": "prompt", "prompt": "Tell me about the plan"})
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    for event in caller.events:
        assert parse_call_event(event) is not None, event
    assert not caller.of("audio_chunk")  # no base64 on this route
    assert not caller.of("error")
    pcm = b"".join(data for _at, data in caller.audio)
    sentences = len(caller.of("sentence_complete"))
    assert sentences >= 1 and len(pcm) == sentences * int(SECONDS_PER_REQUEST * BYTES_PER_SECOND)
    assert caller.of("audio_end")[0]["duration_s"] == pytest.approx(len(pcm) / BYTES_PER_SECOND)
    # Audio frames sit between audio_start and audio_end.
    order = caller.order
    assert order.index("audio_start") < order.index("audio") < order.index("audio_end")
    assert (
        answer_text(caller.events, caller.of("agent_start")[0]["request_id"])
        == "Heard: Tell me about the plan."
    )


def test_a_call_and_invocations_on_one_session_id_are_one_conversation(serve: Any, invoke: Any) -> None:
    url, _app = serve(HoldingEcho(), ["what did I say first"])

    async def call() -> Caller:
        caller = await Caller.open(f"{url}?session_id={SESSION}")
        await caller.send(START)
        assert (await caller.wait_for("listening"))["session_id"] == SESSION
        await caller.speak(tone(0.6) + silence(1.0), realtime=False)
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    assert [e["type"] for e in caller.events[:3]] == ["listening", "speech_start", "transcript"]
    final = caller.of("transcript")[-1]
    assert final == {**final, "role": "user", "text": "what did I say first", "final": True}
    assert "Heard: what did I say first." in answer_text(
        caller.events, caller.of("agent_start")[0]["request_id"]
    )
    base = url.replace("ws://", "http://").removesuffix("/ws")
    status, events = invoke(base, {"prompt": "and now?"}, session_id=SESSION)
    assert status == 200
    said = "".join(e["text"] for e in events if e["type"] == "text_delta").strip()
    assert said == "Heard: what did I say first / and now?."


def test_speaking_during_an_answer_barges_in_and_the_agent_keeps_the_heard_part(serve: Any) -> None:
    model = HoldingEcho()
    url, app = serve(model, [HOLD, "second question"])

    async def call() -> Caller:
        caller = await speak_over_the_answer(url, listen_s=0.7, over_s=0.6)
        await caller.wait_for("agent_end", 2)
        await caller.close()
        return caller

    caller = asyncio.run(call())
    model.gate.set()
    interrupted = caller.of("interrupted")
    assert len(interrupted) == 1 and interrupted[0]["heard_text"]
    # speech_start (the barge-in) comes before interrupted; the second turn is answered after it.
    order = caller.order
    second_speech = [i for i, kind in enumerate(order) if kind == "speech_start"][1]
    assert (
        second_speech < order.index("interrupted") < [i for i, k in enumerate(order) if k == "agent_start"][1]
    )
    agent = app.state.conversations._live[SESSION].agent
    assistant = [m for m in agent.messages if m["role"] == "assistant"]
    first = "".join(block.get("text", "") for block in assistant[0]["content"])
    assert first.strip() == interrupted[0]["heard_text"].strip()
    assert model.TAIL not in first
    second = answer_text(caller.events, caller.of("agent_start")[1]["request_id"])
    assert second == f"Heard: {HOLD} / second question."


def test_a_backchannel_over_the_answer_comes_as_a_final_that_is_no_turn(serve: Any) -> None:
    model = HoldingEcho()
    url, _app = serve(model, [HOLD, "Uh-huh."])

    async def call() -> Caller:
        caller = await speak_over_the_answer(url, listen_s=0.5, over_s=0.25)  # "uh-huh" over the answer
        await caller.wait_for("speech_resumed")
        while len([e for e in caller.of("transcript") if e["final"]]) < 2:
            await caller.speak(silence(0.1))  # its final comes beside speech_resumed
        await caller.close()
        return caller

    caller = asyncio.run(call())
    model.gate.set()
    finals = [e for e in caller.of("transcript") if e["final"]]
    assert [(e["text"], e.get("counts")) for e in finals] == [(HOLD, None), ("Uh-huh.", False)]
    assert not caller.of("interrupted") and len(caller.of("agent_start")) == 1
    assert all("counts" not in e for e in caller.of("transcript") if not e["final"])


def test_the_interrupt_frame_stops_the_answer(serve: Any) -> None:
    model = HoldingEcho()
    url, _app = serve(model, ["unused"])

    async def call() -> Caller:
        caller = await Caller.listening(url)
        await caller.send({"type": "prompt", "prompt": HOLD})
        await caller.wait_for("audio_start")
        await caller.send({"type": "interrupt"})
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    model.gate.set()
    assert len(caller.of("interrupted")) == 1
    assert model.TAIL not in answer_text(caller.events, caller.of("agent_start")[0]["request_id"])


def test_each_turn_writes_its_emf_line(serve: Any) -> None:
    from agentcore_app.metrics import metrics_from_env
    from support.emf import EmfLines

    lines = EmfLines()
    model = HoldingEcho()
    url, _app = serve(
        model, ["spoken words"], metrics=metrics_from_env({"AGENT_METRICS": "emf"}, lines.write)
    )

    async def call() -> None:
        caller = await Caller.listening(url)
        await caller.send({"type": "prompt", "prompt": "typed words"})
        await caller.wait_for("agent_end")
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)
        await caller.wait_for("agent_end", 2)
        await caller.send({"type": "prompt", "prompt": HOLD})
        await caller.wait_for("audio_start", 3)
        await caller.send({"type": "interrupt"})
        await caller.wait_for("agent_end", 3)
        await caller.close()

    asyncio.run(call())
    model.gate.set()
    typed = lines.wait_for("Turns", Input="typed")
    spoken = lines.wait_for("Turns", Input="spoken")
    assert [line["BargeIns"] for line in typed] == [0, 1]
    assert len(spoken) == 1 and spoken[0]["BargeIns"] == 0
    assert "VoiceToVoice" in spoken[0] and "RecognitionTime" in spoken[0]
    assert all("VoiceToVoice" not in line for line in typed)
    assert len(lines.having("Answers")) == 3  # and each answer's own line, as on POST /invocations


def test_bad_frames_are_coded_and_the_call_goes_on(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["unused"], max_audio_frame_bytes=3200)

    async def call() -> Caller:
        caller = await Caller.open(url)
        await caller.socket.send(silence(0.02))  # before start
        await caller.send({"type": "prompt", "prompt": "too early"})
        await caller.send({"type": "start", "sample_rate": 48000})
        await caller.socket.send("{not json")
        await caller.wait_for("error", 4)
        await caller.send(START)
        await caller.wait_for("listening")
        await caller.socket.send(silence(0.5))  # 16,000 bytes: over the 3,200 allowed
        await caller.send({"type": "prompt", "prompt": "still here?"})
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    codes = [(e["code"], e["message"]) for e in caller.of("error")]
    assert [code for code, _ in codes] == ["invalid_request"] * 3 + ["invalid_json", "invalid_request"]
    assert "start" in codes[0][1] and "16000" in codes[2][1] and "3200" in codes[4][1]
    assert "Heard: still here?" in answer_text(caller.events, caller.of("agent_start")[0]["request_id"])


def test_silence_past_the_idle_timeout_closes_the_call_and_others_are_still_served(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["unused"], idle_s=0.5)

    async def quiet(send_audio: bool) -> tuple[Caller, int | None]:
        caller = await Caller.listening(url)
        if send_audio:
            await caller.speak(silence(1.0), realtime=False)
        await asyncio.wait_for(caller.closed.wait(), 10.0)
        return caller, caller.socket.close_code

    async def call() -> Caller:
        caller = await Caller.listening(url)
        await caller.send({"type": "prompt", "prompt": "are you there?"})
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    for send_audio in (True, False):  # silence sent, and nothing sent at all
        caller, code = asyncio.run(quiet(send_audio))
        assert [e["code"] for e in caller.of("error")] == ["idle_timeout"] and code == 1000
    assert asyncio.run(call()).of("agent_end")


def test_a_turn_past_the_longest_is_cut_and_answered(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["a very long turn", "the rest"], listen={"max_turn_s": 1.0})

    async def call() -> Caller:
        caller = await Caller.listening(url)
        await caller.speak(tone(1.6) + silence(0.8), realtime=False)
        await caller.wait_for("transcript", 2)
        # The cut turn and the caller's next words, answered (as one question when the second came
        # before the first answer began: the caller had not stopped).
        deadline = asyncio.get_running_loop().time() + 30.0
        while not (
            any("the rest" in answer_text(caller.events, e["request_id"]) for e in caller.of("agent_start"))
            and len(caller.of("agent_end")) == len(caller.of("agent_start"))
        ):
            assert asyncio.get_running_loop().time() < deadline, caller.order
            await asyncio.sleep(0.02)
        await caller.close()
        return caller

    caller = asyncio.run(call())
    assert [e["code"] for e in caller.of("error")] == ["turn_too_long"]
    assert [e["text"] for e in caller.of("transcript") if e["final"]] == ["a very long turn", "the rest"]
    answers = " / ".join(answer_text(caller.events, e["request_id"]) for e in caller.of("agent_start"))
    assert "a very long turn" in answers


def test_a_turn_the_recognizer_fails_on_is_coded_and_the_next_turn_is_answered(serve: Any) -> None:
    refused = RecognitionError("connection_failed", "No AWS credentials for Amazon Transcribe")
    url, _app = serve(HoldingEcho(), [refused, "are you there"])

    async def call() -> Caller:
        caller = await Caller.listening(url)
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)
        await caller.wait_for("error")
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)
        await caller.wait_for("agent_end")
        await caller.close()
        return caller

    caller = asyncio.run(call())
    errors = caller.of("error")
    assert [e["code"] for e in errors] == ["recognition_failed"]
    assert "AWS" not in errors[0]["message"]  # the recognizer's own words stay in the log
    assert errors[0]["message"] == NOT_RECOGNIZED
    assert [e["text"] for e in caller.of("transcript") if e["final"]] == ["are you there"]
    assert len(caller.of("speech_start")) == 2 and len(caller.of("agent_start")) == 1
    assert "are you there" in answer_text(caller.events, caller.of("agent_start")[0]["request_id"])


def test_a_bad_session_id_is_refused_with_a_policy_close(serve: Any) -> None:
    url, _app = serve(HoldingEcho(), ["unused"])

    async def call() -> Caller:
        caller = await Caller.open(url, headers={SESSION_HEADER: "../../etc/passwd"})
        await asyncio.wait_for(caller.closed.wait(), 10.0)
        return caller

    caller = asyncio.run(call())
    assert [e["code"] for e in caller.of("error")] == ["invalid_request"]
    assert caller.socket.close_code == 1008


def test_a_spoken_turn_is_one_trace_with_its_recognition_time(serve: Any) -> None:
    from support.otel import recording_spans

    url, _app = serve(HoldingEcho(), ["a traced question"])

    async def call() -> None:
        caller = await Caller.listening(url)
        await caller.speak(tone(0.6) + silence(0.8), realtime=False)
        await caller.wait_for("agent_end")
        await caller.close()

    with recording_spans() as exporter:
        asyncio.run(call())
        spans = exporter.get_finished_spans()
        (turn,) = [span for span in spans if span.name == "agentcore_app.turn"]
        answers = [span for span in spans if span.name == "strands_voice.answer"]
    assert turn.attributes is not None and turn.attributes["agentcore_app.spoken"] is True
    assert float(turn.attributes["agentcore_app.recognition_ms"]) >= 0  # type: ignore[arg-type]
    assert turn.attributes["agentcore_app.end_of_turn"] == "silence"  # the scripted listener has no model
    assert float(turn.attributes["agentcore_app.voice_to_voice_ms"]) > 0  # type: ignore[arg-type]
    # The answer's span (under the agent's) is in the turn's trace.
    assert [span.context.trace_id for span in answers] == [turn.context.trace_id]
