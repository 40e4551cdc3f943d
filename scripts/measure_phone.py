"""What a phone line costs the caller. Not a test: a measurement (docs/telephony.md cites its figures).

1. The recognizer at 8 kHz μ-law beside 16 kHz: the bench's turn set (tools/strands_voice_tools/bench/
   turn_set.py: questions, sentences with a pause, backchannels, the interruption) said by the endpoint's
   three English-speaking voices, transcribed by the app's recognizer (faster-whisper base, greedy) once as
   16 kHz PCM16 and once through the phone (16 kHz → 8 kHz μ-law → the app's 16 kHz, the protocol's
   ``telephony.phone_audio``), each with 0.3 s of silence around it as a turn has; the word error rate of
   each (jiwer; lower case, punctuation dropped, digits spelled out).
2. Calls over ``WS /twilio`` from the fake phone (tests/support/phone.py: 20 ms μ-law frames at real time,
   playback drained at real time, marks returned when played, emptied on ``clear``) to the example app with
   its default listener (Silero, Whisper), the real Kokoro endpoint (in-process, ONNX int8) and Strands'
   ``OpenAIModel`` against the OpenAI-compatible stand-in: voice-to-voice (end of the question's voice →
   the first answer audio played), barge-in silence (start of "Stop please. What does it cost?" → the phone
   silent), and the barge-in's answer (its end → its answer's first audio played).

Needs the ``asr`` and ``listen`` groups. One JSON line per part::

    HF_HUB_OFFLINE=1 uv run python scripts/measure_phone.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# The tests' shared helpers (tests/support) play the phone and speak.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from strands_voice_protocol.telephony.phone_audio import CallToPhone, PhoneToCall
from strands_voice_tools.bench.turn_set import BACKCHANNELS, INTERRUPTIONS, PAUSED, QUESTIONS, VOICES, spoken
from support.phone import spoken_phone_call

ANSWER = (
    "The premium plan costs twenty five dollars a month, billed once at the start of each month. "
    "You can cancel it at any time without a fee, from the settings page of the app. "
    "It includes unlimited storage for your photos and videos, and support day and night."
)
QUESTION = "Could you please tell me what the Premium plan costs each month?"


def through_the_phone(pcm16: bytes) -> bytes:
    """16 kHz speech as the app hears it from a phone: μ-law at 8 kHz, then back to 16 kHz."""
    to_phone = CallToPhone()
    return PhoneToCall().convert(to_phone.convert(pcm16) + to_phone.flush())


DIGITS = "zero one two three four five six seven eight nine".split()
#: Silence around each utterance, as a turn reaches the recognizer (the VAD's margins).
MARGIN = bytes(2 * 16_000 * 3 // 10)


def words(text: str) -> str:
    """Lower case, punctuation dropped, each digit a word (Whisper writes "four two seven" as "427")."""
    spelled = re.sub(r"\d", lambda digit: f" {DIGITS[int(digit.group())]} ", text.lower())
    return " ".join(re.sub(r"[^\w\s']", " ", spelled).split())


def word_error_rates(engine: Any) -> dict[str, Any]:
    import jiwer

    from strands_voice.listen import WhisperRecognizer

    recognizer = WhisperRecognizer()
    texts = [*QUESTIONS, *(t.replace("|", "") for t in PAUSED), *BACKCHANNELS, *INTERRUPTIONS]
    truth, wide, narrow = [], [], []
    for voice in VOICES:
        for text in texts:
            pcm = MARGIN + spoken(engine, text, voice, pause_s=0.0) + MARGIN
            truth.append(words(text))
            wide.append(words(recognizer.transcribe(pcm)))
            narrow.append(words(recognizer.transcribe(through_the_phone(pcm))))
    misses = [(t, w, n) for t, w, n in zip(truth, wide, narrow, strict=True) if w != t or n != t]
    said = [words(text) for text in BACKCHANNELS]
    spoken_words = [i for i, t in enumerate(truth) if t not in said]  # the backchannels apart

    def wer(hypotheses: list[str], only: list[int] | None = None) -> float:
        picked = range(len(truth)) if only is None else only
        return round(jiwer.wer([truth[i] for i in picked], [hypotheses[i] for i in picked]), 4)

    return {
        "part": "wer",
        "utterances": len(truth),
        "voices": list(VOICES),
        "wer_16k": wer(wide),
        "wer_8k_mulaw": wer(narrow),
        "wer_16k_without_backchannels": wer(wide, spoken_words),
        "wer_8k_mulaw_without_backchannels": wer(narrow, spoken_words),
        "misses": misses,
    }


async def calls(engine: Any, count: int) -> dict[str, Any]:
    from agentcore_app.app import create_app
    from agentcore_app.call import default_listener_factory
    from agentcore_app.conversation import ConversationStore
    from agentcore_app.payload import parse_call_start
    from agentcore_app.scripted import ScriptedModel
    from kokoro_endpoint.serving.app import create_app as create_endpoint
    from kokoro_endpoint.serving.runner import running_server
    from support.openai_model import served_openai_model
    from support.spoken import speak_16k

    factory = default_listener_factory()
    await (await factory(parse_call_start({}))).aclose()  # Whisper and the turn model loaded before the calls
    question, barge = speak_16k(engine, QUESTION), speak_16k(engine, INTERRUPTIONS[0])
    figures: list[Any] = []
    with (
        running_server(create_endpoint(engine=engine)) as endpoint,
        served_openai_model(ScriptedModel(text=ANSWER, first_sentence_s=0.3, total_s=1.2)) as (model, _log),
    ):
        app = create_app(
            tts_url=endpoint.ws_url,
            model=model,
            conversation_store=ConversationStore(kind="none"),
            listener_factory=factory,
            silence_timeout=120.0,
        )
        with running_server(app) as server:
            url = server.base_url.replace("http://", "ws://") + "/twilio"
            for _ in range(count):
                _phone, measured = await spoken_phone_call(url, question, barge)
                figures.append(measured)

    def ms(name: str) -> list[float]:
        return [round(getattr(f, name) * 1000.0) for f in figures if getattr(f, name) is not None]

    return {
        "part": "calls",
        "calls": count,
        **{name: ms(name) for name in ("voice_to_voice", "barge_silence", "barge_answer")},
        **{f"{name}_median": statistics.median(ms(name)) for name in ("voice_to_voice", "barge_silence")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3, help="phone calls to time (0: none)")
    parser.add_argument("--no-wer", action="store_true", help="time the calls only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from kokoro_endpoint.engines.loader import load_engine

    engine = load_engine("onnx")
    engine.warm_up()
    stamp = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": os.getloadavg()}
    if not args.no_wer:
        print(json.dumps({**word_error_rates(engine), **stamp}), flush=True)
    if args.calls:
        print(json.dumps({**asyncio.run(calls(engine, args.calls)), **stamp}), flush=True)


if __name__ == "__main__":
    main()
