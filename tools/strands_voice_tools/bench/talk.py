"""``strands-voice bench --talk``: voice-to-voice latency and barge-in reaction of ``VoiceCascade``.

A real ``BidiAgent`` with ``VoiceCascade`` (Silero VAD, faster-whisper base int8, the ONNX Kokoro
endpoint on loopback) and a stand-in model whose first sentence is ready 0.5 s after it is asked. Each
trial plays a question (the endpoint's own voice, trimmed to its audible part) at real-time speed into
the agent's input stream, then:

- voice-to-voice = the end of the caller's speech -> the first audible sound of the answer (playback
  starting at its first audio delta), split into end-of-turn detection (-> the listener's turn end),
  recognition (-> the final transcript), the model's first sentence (-> its text holds a sentence end)
  and the first heard sound (-> the audible sound);
- barge-in reaction = the start of the caller's speech during the answer -> the last agent audio (the
  ``BidiBargeInEvent``: the player drops its buffer there, and no audio of that answer follows it).

Medians of N trials after one warm-up trial; the machine and its load are recorded with the figures.
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Callable
from typing import Any, Final

import numpy as np
from agentcore_app.scripted import ScriptedModel
from strands.bidi.types.events import BidiAudioDeltaEvent, BidiBargeInEvent, BidiResponseStartEvent
from strands_voice_protocol.audio import float32_to_pcm16
from strands_voice_protocol.audio.audible import first_audible_sample, pcm16_to_float
from strands_voice_protocol.audio.resample import resample_linear
from strands_voice_protocol.wire import SAMPLE_RATE

from strands_voice_tools.bench.stats import summarize
from strands_voice_tools.machine import describe_machine, load_average
from strands_voice_tools.talk.stack import DEFAULT_VOICE, TalkStack
from strands_voice_tools.talk.streams import LISTEN_RATE, AnswerRecorder, PacedInput

__all__ = ["QUESTIONS", "TalkBenchModel", "bench_talk"]

QUESTIONS: Final = (
    "What does the premium plan cost?",
    "Can I cancel my plan at any time?",
    "How many devices can I use offline?",
)
BARGE_IN: Final = "Wait, stop talking please."
ANSWER: Final = (
    "The premium plan costs twenty five dollars a month. You can cancel it at any time without a fee. "
    "It includes unlimited storage, priority support and offline access on five devices."
)
SPLITS: Final = ("end_of_turn", "recognition", "first_sentence", "first_heard")
Progress = Callable[[str], None]


class TalkBenchModel(ScriptedModel):
    """The stand-in: :data:`ANSWER` with its first sentence at 0.5 s; each trial scripts "Okay." after it."""

    def __init__(self) -> None:
        super().__init__(text=ANSWER, first_sentence_s=0.5, total_s=1.5)


def _answer_next(stack: TalkStack, text: str, total_s: float) -> None:
    """Script the stand-in's answer to what the caller says next (an answer reads it as it starts)."""
    stack.cascade.model.update_config(text=text, total_s=total_s)


def audible_16k(engine: Any, text: str, voice: str = DEFAULT_VOICE) -> bytes:
    """``text`` in one of the endpoint's voices at 16 kHz, trimmed to its audible part (so its ends are
    known), read in the language the endpoint would read it in (Japanese text under a Japanese voice)."""
    from kokoro_endpoint.reading.languages import Reading, request_language

    reading = Reading(lang=request_language(None, voice, text))
    audio = np.concatenate(list(engine.synthesize(text, voice, 1.0, reading)))
    start = first_audible_sample(audio, engine.sample_rate) or 0
    end = len(audio) - (first_audible_sample(audio[::-1].copy(), engine.sample_rate) or 0)
    return resample_linear(float32_to_pcm16(audio[start:end]), engine.sample_rate, LISTEN_RATE)


def _first_heard_s(recorder: AnswerRecorder, answer_id: str) -> float:
    """Seconds from an answer's first audio delta to its first audible sample."""
    samples = pcm16_to_float(recorder.audio(answer_id))
    index = first_audible_sample(samples, SAMPLE_RATE)
    return (index or 0) / SAMPLE_RATE


async def _one_trial(
    stack: TalkStack, mic: PacedInput, recorder: AnswerRecorder, question: bytes, barge: bytes
) -> dict[str, float]:
    started = recorder.until(lambda e: isinstance(e, BidiResponseStartEvent), within_s=60)
    _answer_next(stack, ANSWER, 1.5)
    mic.say(question)
    await started
    answer_id = next(
        e.response_id for _, e in reversed(recorder.events) if isinstance(e, BidiResponseStartEvent)
    )
    speech_end = mic.spoke[-1][1]
    first_delta = await recorder.until(
        lambda e: isinstance(e, BidiAudioDeltaEvent) and e.content_id.startswith(answer_id), within_s=60
    )
    marks = dict(stack.cascade.marks)
    await asyncio.sleep(1.5)  # the caller listens for a while, then speaks over the answer
    first_heard = first_delta + _first_heard_s(recorder, answer_id)
    barged = recorder.until(lambda e: isinstance(e, BidiBargeInEvent), within_s=30)
    _answer_next(stack, "Okay.", 0.3)
    mic.say(barge)
    barge_at = await barged
    speech_start = mic.current_start if mic.current_start is not None else mic.spoke[-1][0]
    await recorder.answer_ended(within_s=30)  # the cut answer
    await recorder.answer_ended(within_s=60)  # "Okay."
    return {
        "voice_to_voice": first_heard - speech_end,
        "end_of_turn": marks["turn_end"] - speech_end,
        "recognition": marks["transcript"] - marks["turn_end"],
        "first_sentence": marks["first_sentence"] - marks["transcript"],
        "first_heard": first_heard - marks["first_sentence"],
        "barge_in": barge_at - speech_start,
    }


async def bench_talk(stack: TalkStack, trials: int, progress: Progress) -> dict[str, Any]:
    """Run the trials on a running stack; returns the figures (seconds) and the machine."""
    questions = [audible_16k(stack.engine, text) for text in QUESTIONS]
    barge = audible_16k(stack.engine, BARGE_IN)
    await stack.cascade.recognizer.warm_up()
    mic, recorder = PacedInput(), AnswerRecorder()
    task = asyncio.create_task(stack.agent.run(inputs=[mic], outputs=[recorder]))
    rows: list[dict[str, float]] = []
    try:
        await asyncio.sleep(0.5)
        for index in range(trials + 1):
            row = await _one_trial(stack, mic, recorder, questions[index % len(questions)], barge)
            if index:  # the first trial warms up
                rows.append(row)
            progress(
                f"talk trial {index}/{trials}: voice-to-voice {row['voice_to_voice']:.3f} s, "
                f"barge-in {row['barge_in']:.3f} s"
            )
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=15)
    settings = stack.cascade.listen_settings
    return {
        "kind": "talk",
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "trials": trials,
        "model_first_sentence_s": 0.5,
        "settings": {
            "end_silence_s": settings.end_silence_s,
            "min_speech_s": settings.min_speech_s,
            "speculative": settings.speculative,
            "vad_threshold": settings.vad_threshold,
        },
        "figures": {name: summarize(row[name] for row in rows) for name in rows[0]},
        "machine": describe_machine(stack.engine),
        "load_average": load_average(),
    }


def format_talk(results: dict[str, Any]) -> str:
    """The figures as a table (medians, ms)."""
    figures = results["figures"]
    lines = [f"VoiceCascade, {results['trials']} trials (medians; min-max)", ""]
    for name in ("voice_to_voice", *SPLITS, "barge_in"):
        f = figures[name]
        label = name if name in ("voice_to_voice", "barge_in") else f"  {name}"
        lines.append(
            f"{label:<18} {1000 * f['median']:7.0f} ms   ({1000 * f['min']:.0f}-{1000 * f['max']:.0f})"
        )
    return "\n".join(lines)


def write_talk_plot(results: dict[str, Any], path: Any, pyplot: Any) -> None:
    """A stacked bar of voice-to-voice's median splits next to the barge-in reaction."""
    figures = results["figures"]
    figure, axis = pyplot.subplots(figsize=(8, 3.2))
    left = 0.0
    for name in SPLITS:
        width = 1000 * max(figures[name]["median"], 0.0)
        axis.barh(["voice-to-voice"], [width], left=left, label=name.replace("_", " "))
        left += width
    axis.barh(["barge-in"], [1000 * figures["barge_in"]["median"]], color="grey")
    axis.axvline(1500, color="red", linestyle="--", linewidth=1)
    axis.axvline(400, color="red", linestyle=":", linewidth=1)
    axis.set_xlabel("ms (medians); targets dashed: 1500 voice-to-voice, 400 barge-in")
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
